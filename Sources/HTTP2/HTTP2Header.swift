/// One HTTP/2 header field. Names must be lowercase.
package struct HTTP2Header: Sendable, Hashable {
    package var name: String
    package var value: String
    /// Encode as HPACK "literal never indexed" (for `:path`, `apns-id`, `authorization` and other per-request or
    /// secret values) so it never enters either side's dynamic table.
    package var neverIndex: Bool

    package init(_ name: String, _ value: String, neverIndex: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndex = neverIndex
    }
}

extension Array where Element == HTTP2Header {
    /// The first value of header `name` (case-sensitive; HTTP/2 names are lowercase).
    package func first(name: String) -> String? {
        for header in self where header.name == name { return header.value }
        return nil
    }
}
