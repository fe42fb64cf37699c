/// One request as the mock's HTTP/2 server received it.
public struct APNsMockRequest: Sendable {
    /// `:method`.
    public var method: String
    /// `:path`.
    public var path: String
    /// Every header, pseudo-headers included, in arrival order (names as received; compared lowercased).
    public var headers: [(name: String, value: String)]
    /// The DATA bytes.
    public var body: [UInt8]

    public init(method: String = "POST", path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The first value of `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}
