/// An answer to send on the stream: `:status`, headers, body.
public struct APNsMockResponse: Sendable, Hashable {
    public var status: Int
    /// Regular headers (not `:status`), e.g. `apns-id`, `apns-unique-id`, `content-type`.
    public var headers: [String: String]
    public var body: [UInt8]
    /// The reason in the body, if any (nil on success).
    public var reason: String?

    public init(status: Int, headers: [String: String], body: [UInt8], reason: String?) {
        self.status = status
        self.headers = headers
        self.body = body
        self.reason = reason
    }

    /// The `apns-id` header.
    public var apnsID: String? { headers["apns-id"] }
}

