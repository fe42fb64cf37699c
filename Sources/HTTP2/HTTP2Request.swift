/// A request to send on an `HTTP2ClientConnection`.
public struct HTTP2Request: Sendable {
    /// Default: `"POST"`.
    package var method: String
    /// The `:path` pseudo-header, e.g. `/3/device/<token>`.
    package var path: String
    /// The `:authority` pseudo-header (host).
    var authority: String
    /// Default: `"https"`.
    var scheme: String
    /// Regular header fields, in order (lowercase names, no pseudo-headers).
    /// Default: `[]`.
    package var headers: [HTTP2Header]
    /// The request body (sent as DATA frames with END_STREAM). Empty: HEADERS carries END_STREAM.
    /// Default: `[]`.
    package var body: [UInt8]
    /// Encode `:path` as never-indexed.
    /// Default: `true` (APNs guidance: per-request values stay out of the HPACK table).
    var neverIndexPath: Bool

    package init(
        method: String = "POST",
        path: String,
        authority: String,
        scheme: String = "https",
        headers: [HTTP2Header] = [],
        body: [UInt8] = [],
        neverIndexPath: Bool = true
    ) {
        self.method = method
        self.path = path
        self.authority = authority
        self.scheme = scheme
        self.headers = headers
        self.body = body
        self.neverIndexPath = neverIndexPath
    }
}
