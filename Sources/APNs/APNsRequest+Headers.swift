package import HTTP2

/// One HTTP/2 header field for the transport: name, value, and whether HPACK must never index it
/// (`NGHTTP2_NV_FLAG_NO_INDEX`).
typealias APNsHeaderField = (name: String, value: String, neverIndex: Bool)

extension APNsRequest {
    /// The HTTP/2 header list for this request, in order: `:method`, `:scheme`, `:path`, `:authority`, then
    /// `authorization` (token auth only), `apns-push-type`, `apns-topic`, `apns-priority`, `apns-expiration`,
    /// `apns-collapse-id`, `apns-id` (each only when set), `content-type`, `content-length`.
    ///
    /// `:path` and `apns-id` are unique per request and `apns-collapse-id` per call, so they are never indexed: each
    /// would take a dynamic-table entry for one use, and nghttp2 finds an entry by comparing the value of every entry
    /// with the same name, so a table churned by per-request values makes HPACK several times dearer.
    /// `apns-expiration` stays indexed (a second's events share it).
    /// `authorization` is not flagged, as Apple's newer connection article advises indexing it (the value changes at
    /// most every 20 minutes), but nghttp2's encoder sends that one header "literal never indexed" whatever the flag
    /// (it treats it as sensitive): every request carries the whole provider token, Huffman-coded again.
    /// - Parameters:
    ///   - authority: `:authority`, usually ``APNsEndpoint/authority``.
    ///   - bearerToken: the JWT (without `bearer `), or nil for certificate auth.
    func headerFields(authority: String, bearerToken: String?) -> [APNsHeaderField] {
        var fields: [APNsHeaderField] = [
            (":method", "POST", false),
            (":scheme", "https", false),
            (":path", path, true),
            (":authority", authority, false),
        ]
        fields.reserveCapacity(14)
        if let bearerToken { fields.append(("authorization", "bearer " + bearerToken, false)) }
        fields.append(("apns-push-type", pushType.rawValue, false))
        fields.append(("apns-topic", topic, false))
        fields.append(("apns-priority", priority.description, false))
        if let expiration = expiration.headerValue { fields.append(("apns-expiration", expiration, false)) }
        if let collapseID { fields.append(("apns-collapse-id", collapseID, true)) }
        if let apnsID { fields.append(("apns-id", apnsID, true)) }
        fields.append(("content-type", "application/json", false))
        fields.append(("content-length", String(payload.count), false))
        return fields
    }

    /// The regular fields of ``headerFields(authority:bearerToken:)`` (no pseudo-headers) as the pool sends them, in
    /// the same order and with the same never-index flags, built in one array; `authorization` is the whole value
    /// (``APNsProviderToken/authorizationValue``), nil for certificate auth.
    func http2Headers(authorization: String?) -> [HTTP2Header] {
        var headers: [HTTP2Header] = []
        headers.reserveCapacity(9)
        if let authorization { headers.append(HTTP2Header("authorization", authorization)) }
        headers.append(HTTP2Header("apns-push-type", pushType.rawValue))
        headers.append(HTTP2Header("apns-topic", topic))
        headers.append(HTTP2Header("apns-priority", priority.description))
        if let expiration = expiration.headerValue { headers.append(HTTP2Header("apns-expiration", expiration)) }
        if let collapseID { headers.append(HTTP2Header("apns-collapse-id", collapseID, neverIndex: true)) }
        if let apnsID { headers.append(HTTP2Header("apns-id", apnsID, neverIndex: true)) }
        headers.append(HTTP2Header("content-type", "application/json"))
        headers.append(HTTP2Header("content-length", String(payload.count)))
        return headers
    }

    /// The HTTP/2 request a pool sends for this push to `authority`: ``http2Headers(authorization:)`` and the payload.
    package func http2Request(authority: String, authorization: String?) -> HTTP2Request {
        HTTP2Request(method: "POST", path: path, authority: authority, headers: http2Headers(authorization: authorization),
                     body: payload)
    }

    /// ``headerFields(authority:bearerToken:)`` for `endpoint` and an optional provider token.
    func headerFields(endpoint: APNsEndpoint, token: APNsProviderToken?) -> [APNsHeaderField] {
        headerFields(authority: endpoint.authority, bearerToken: token?.jwt)
    }
}
