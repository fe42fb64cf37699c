/// The event's `custom` object, kept as validated raw JSON so it can be merged at the payload's top level
/// without a round trip through a dictionary.
///
/// Members keep their input order; a key that appears twice keeps its last value (as `JSONSerialization`
/// does), so the merged payload never has duplicate keys.
package struct CustomFields: Sendable, Hashable {
    /// One member: the decoded key and its value as raw, validated JSON text (UTF-8).
    struct Member: Sendable, Hashable {
        package var key: String
        var rawValue: [UInt8]
        init(key: String, rawValue: [UInt8]) {
            self.key = key
            self.rawValue = rawValue
        }
    }

    private(set) var members: [Member]

    package init() { self.members = [] }

    /// Members with duplicates resolved (last one wins, at the position of the first).
    init(members: [Member]) {
        self.members = []
        for member in members { set(member) }
    }

    var isEmpty: Bool { members.isEmpty }

    /// The raw JSON value for `key`, if present.
    package subscript(key: String) -> [UInt8]? {
        members.first(where: { $0.key == key })?.rawValue
    }

    mutating func set(_ member: Member) {
        if let index = members.firstIndex(where: { $0.key == member.key }) {
            members[index] = member
        } else {
            members.append(member)
        }
    }

    /// The members as one JSON object text.
    var jsonText: String {
        var writer = JSONWriter()
        write(to: &writer)
        return String(decoding: writer.finish(), as: UTF8.self)
    }

    /// Appends the members to `writer` as one JSON object.
    func write(to writer: inout JSONWriter) {
        writer.appendByte(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { writer.appendByte(UInt8(ascii: ",")) }
            writer.appendString(member.key)
            writer.appendByte(UInt8(ascii: ":"))
            writer.appendRaw(member.rawValue)
        }
        writer.appendByte(UInt8(ascii: "}"))
    }
}
