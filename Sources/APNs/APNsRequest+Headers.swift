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
        let pseudo: [APNsHeaderField] = [
            (":method", "POST", false),
            (":scheme", "https", false),
            (":path", path, true),
            (":authority", authority, false),
        ]
        return pseudo + http2Headers(authorization: bearerToken.map { "bearer " + $0 }).map {
            ($0.name, $0.value, $0.neverIndex)
        }
    }

    /// Writes the regular fields of ``headerFields(authority:bearerToken:)`` (no pseudo-headers) as the pool sends
    /// them, in that order and with those never-index flags; `authorization` is the whole value
    /// (``APNsProviderToken/authorizationValue``), nil for certificate auth. A push writes them straight into its
    /// connection's encoder (``APNsPush/writeHeaderFields(_:)``).
    func writeHeaderFields(_ writer: HTTP2HeaderWriter, authorization: String?) {
        if let authorization { writer.add("authorization", authorization) }
        writer.add("apns-push-type", pushType.rawValue)
        writer.add("apns-topic", topic)
        writer.add("apns-priority", decimal: Int64(priority.rawValue))
        switch expiration {
        case .none: break
        case .immediately: writer.add("apns-expiration", "0" as StaticString)
        case .at(let seconds): writer.add("apns-expiration", decimal: seconds)
        }
        if let collapseID { writer.add("apns-collapse-id", collapseID, neverIndex: true) }
        if let id {
            writer.add("apns-id", valueCount: APNsID.textCount, indexing: .never) {
                id.write(to: UnsafeMutableRawBufferPointer($0))
            }
        }
        writer.add("content-type", "application/json" as StaticString)
        writer.add("content-length", decimal: Int64(payload.count))
    }

    /// ``writeHeaderFields(_:authorization:)``'s fields as an array.
    func http2Headers(authorization: String?) -> [HTTP2Header] {
        let encoder = NGHTTP2HeaderEncoder(capacity: 512)
        writeHeaderFields(HTTP2HeaderWriter(encoder: encoder), authorization: authorization)
        return encoder.headers
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
