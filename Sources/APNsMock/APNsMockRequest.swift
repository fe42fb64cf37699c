public import HTTP2

/// One request as the mock's HTTP/2 server received it.
struct APNsMockRequest: Sendable {
    /// `:method`.
    public var method: String
    /// `:path`.
    public var path: String
    /// The regular headers in arrival order (pseudo-headers are ``method`` and ``path``; any given here are
    /// ignored). Names are compared ignoring ASCII case.
    public var headers: [HTTP2Header]
    /// The DATA bytes.
    public var body: [UInt8]

    init(method: String = "POST", path: String, headers: [HTTP2Header], body: [UInt8]) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    init(method: String = "POST", path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.init(method: method, path: path, headers: headers.map { HTTP2Header($0.name, $0.value) }, body: body)
    }

    /// The first value of `name` (ASCII case-insensitive; no allocation).
    func header(_ name: String) -> String? {
        for header in headers where APNsMockBytes.equalIgnoringASCIICase(header.name, name) { return header.value }
        return nil
    }
}
