package import HTTP2
/// A complete request received by an `HTTP2Server`. Its header fields are kept as the bytes nghttp2 delivered
/// (``fields``); ``method``, ``path`` and ``headers`` decode them into strings on each read.
package struct HTTP2ServerRequest: Sendable {
    /// Every header field in arrival order, pseudo-headers (`:method`, `:path`, `:scheme`, `:authority`) first.
    package var fields: HTTP2RawHeaderBlock
    package var body: [UInt8]
    package var streamID: Int32
    /// The connection it arrived on (to change its SETTINGS, send GOAWAY, or drop it).
    package var connection: HTTP2ServerConnection

    /// `:method` ("" when absent).
    package var method: String { fields.first(name: ":method") ?? "" }
    /// `:path` ("" when absent).
    package var path: String { fields.first(name: ":path") ?? "" }
    /// `:authority` ("" when absent).
    var authority: String { fields.first(name: ":authority") ?? "" }
    /// `:scheme` ("" when absent).
    var scheme: String { fields.first(name: ":scheme") ?? "" }
    /// Regular header fields (no pseudo-headers), in arrival order.
    package var headers: [HTTP2Header] { fields.decoded() }
}
