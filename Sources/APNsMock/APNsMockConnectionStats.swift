/// What the mock saw on one connection (for tests of stream accounting).
public struct APNsMockConnectionStats: Sendable, Hashable {
    /// The HTTP/2 server connection id.
    public let id: Int
    /// Requests received.
    public let requests: Int
    /// Most streams awaiting an answer at once.
    public let maxConcurrentStreams: Int
    /// Most streams awaiting an answer at once before the first valid provider token (token mode).
    public let maxConcurrentStreamsBeforeAuthentication: Int
    /// A valid provider token arrived, so the stream limit was raised.
    public let authenticated: Bool
    /// Streams refused (RST_STREAM REFUSED_STREAM) because they came after this connection's GOAWAY decision.
    public let refusedAfterGoAway: Int
}
