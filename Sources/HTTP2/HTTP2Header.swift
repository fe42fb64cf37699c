/// One HTTP/2 header field. Names must be lowercase.
public struct HTTP2Header: Sendable, Hashable {
    public var name: String
    public var value: String
    /// Encode as HPACK "literal never indexed" (for `:path`, `apns-id`, `authorization` and other per-request or
    /// secret values) so it never enters either side's dynamic table.
    package var neverIndex: Bool

    public init(_ name: String, _ value: String, neverIndex: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndex = neverIndex
    }
}

extension Array where Element == HTTP2Header {
    /// The first value of header `name` (case-sensitive; HTTP/2 names are lowercase).
    public func first(name: String) -> String? {
        for header in self where header.name == name { return header.value }
        return nil
    }
}
