/// A complete request received by an `HTTP2Server`.
public struct HTTP2ServerRequest: Sendable {
    public var method: String
    public var path: String
    var authority: String
    var scheme: String
    /// Regular header fields (no pseudo-headers), in arrival order.
    public var headers: [HTTP2Header]
    public var body: [UInt8]
    public var streamID: Int32
    /// The connection it arrived on (to change its SETTINGS, send GOAWAY, or drop it).
    public var connection: HTTP2ServerConnection
}
