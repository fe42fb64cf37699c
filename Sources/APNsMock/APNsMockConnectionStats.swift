/// What the mock saw on one connection (for tests of stream accounting).
struct APNsMockConnectionStats: Sendable, Hashable {
    /// The HTTP/2 server connection id.
    let id: Int
    /// Requests received.
    let requests: Int
    /// Most streams awaiting an answer at once.
    let maxConcurrentStreams: Int
    /// Most streams awaiting an answer at once before the first valid provider token (token mode).
    let maxConcurrentStreamsBeforeAuthentication: Int
    /// A valid provider token arrived, so the stream limit was raised.
    let authenticated: Bool
    /// Streams refused (RST_STREAM REFUSED_STREAM) because they came after this connection's GOAWAY decision.
    let refusedAfterGoAway: Int
}
