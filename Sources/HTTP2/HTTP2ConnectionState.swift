/// The life cycle of a client connection.
package enum HTTP2ConnectionState: Int, Sendable {
    /// TCP/TLS/HTTP2 preface in progress; requests are queued.
    case connecting = 0
    /// The peer's first SETTINGS arrived; requests flow.
    case ready = 1
    /// GOAWAY received (or local close started): no new streams; in-flight ones below the last id finish.
    /// A pool should open a replacement now.
    case goingAway = 2
    /// Closed; every request was answered.
    case closed = 3
}
