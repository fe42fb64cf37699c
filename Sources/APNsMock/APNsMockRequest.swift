import HTTP2

/// One request as the mock's HTTP/2 server received it: its header fields as bytes (the server's own block, no copy)
/// and its body.
struct APNsMockRequest: Sendable {
    /// Every header field in arrival order: `:method` and `:path` (with the server's other pseudo-headers), then the
    /// regular headers. Names are compared ignoring ASCII case.
    var fields: HTTP2RawHeaderBlock
    /// The DATA bytes.
    package var body: [UInt8]

    init(fields: HTTP2RawHeaderBlock, body: [UInt8]) {
        self.fields = fields
        self.body = body
    }

    /// A request with `method`, `path` and the regular `headers` in order (pseudo-headers given here are ignored).
    init(method: String = "POST", path: String, headers: [HTTP2Header], body: [UInt8]) {
        self.init(fields: HTTP2RawHeaderBlock([HTTP2Header(":method", method), HTTP2Header(":path", path)]
                      + headers.filter { $0.name.utf8.first != UInt8(ascii: ":") }),
                  body: body)
    }

    init(method: String = "POST", path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.init(method: method, path: path, headers: headers.map { HTTP2Header($0.name, $0.value) }, body: body)
    }

    /// `:method` ("" when absent).
    package var method: String { fields.first(name: ":method") ?? "" }
    /// `:path` ("" when absent).
    package var path: String { fields.first(name: ":path") ?? "" }
    /// The regular headers in arrival order (decoded on each read).
    package var headers: [HTTP2Header] { fields.decoded() }
}
