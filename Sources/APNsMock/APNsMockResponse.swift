public import HTTP2

/// An answer to send on the stream: `:status`, headers, body.
struct APNsMockResponse: Sendable, Hashable {
    public var status: Int
    /// Regular headers (not `:status`) in the order they are sent: `apns-id`, then `apns-unique-id` or
    /// `content-type`.
    public var headers: [HTTP2Header]
    public var body: [UInt8]
    /// The reason in the body, if any (nil on success).
    public var reason: String?

    init(status: Int, headers: [HTTP2Header], body: [UInt8], reason: String?) {
        self.status = status
        self.headers = headers
        self.body = body
        self.reason = reason
    }

    /// The first value of header `name`.
    func header(_ name: String) -> String? { headers.first(name: name) }

    /// The `apns-id` header.
    public var apnsID: String? { header("apns-id") }
}
