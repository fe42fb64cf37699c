import HTTP2

/// An answer to send on the stream: `:status`, headers, body. The header values are kept as what they are made from
/// (UUIDs as their bits), and written into the server's header block only when the answer is sent
/// (``writeHeaders(_:)``); ``headers`` spells them out as `HTTP2Header`s.
struct APNsMockResponse: Sendable, Hashable {
    package var status: Int
    /// `apns-id`: the request's own, exactly as sent, or a generated one.
    var id: APNsMockUUID
    /// `apns-unique-id`, sent on success as the sandbox does; nil when not sent.
    var uniqueID: APNsMockUUID?
    /// Empty on success; the JSON reason otherwise (sent with `content-type: application/json`).
    package var body: [UInt8]
    /// The reason in the body, if any (nil on success).
    package var reason: String?

    init(status: Int, id: APNsMockUUID, uniqueID: APNsMockUUID? = nil, body: [UInt8] = [], reason: String? = nil) {
        self.status = status
        self.id = id
        self.uniqueID = uniqueID
        self.body = body
        self.reason = reason
    }

    /// Regular headers (not `:status`) in the order they are sent: `apns-id`, then `apns-unique-id` or
    /// `content-type`. Per-response values are never indexed, so they do not churn the HPACK tables on either side.
    package var headers: [HTTP2Header] {
        var headers = [HTTP2Header("apns-id", id.text, neverIndex: true)]
        if let uniqueID { headers.append(HTTP2Header("apns-unique-id", uniqueID.text, neverIndex: true)) }
        if !body.isEmpty { headers.append(HTTP2Header("content-type", "application/json")) }
        return headers
    }

    /// Writes ``headers`` into a response's header block, the UUIDs in place. Their values are never indexed, but
    /// the connection's first `apns-id` and `apns-unique-id` are, so later answers send those names as an index
    /// (15 bytes less per answer, and no Huffman coding of the names on either side).
    func writeHeaders(_ writer: HTTP2HeaderWriter) {
        writer.add("apns-id", valueCount: APNsMockUUID.textLength, indexing: .perResponse) { id.write(to: $0) }
        if let uniqueID {
            writer.add("apns-unique-id", valueCount: APNsMockUUID.textLength, indexing: .perResponse) {
                uniqueID.write(to: $0)
            }
        }
        if !body.isEmpty { writer.add("content-type", "application/json") }
    }

    /// The first value of header `name`.
    func header(_ name: String) -> String? { headers.first(name: name) }

    /// The `apns-id` header.
    package var apnsID: String? { id.text }
}
