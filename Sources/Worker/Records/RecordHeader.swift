/// One Kafka record header. Kafka allows a name to appear more than once; readers here take the last.
struct RecordHeader: Sendable, Hashable {
    var name: String
    var value: [UInt8]

    init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    init(name: String, text: String) {
        self.init(name: name, value: Array(text.utf8))
    }

    init(name: String, integer: Int64) {
        self.init(name: name, value: HeaderCodec.encode(integer))
    }

    /// The value as UTF-8 text (invalid bytes replaced).
    var text: String { String(decoding: value, as: UTF8.self) }
}

extension [RecordHeader] {
    /// The last header named `name`.
    func last(named name: String) -> RecordHeader? { last(where: { $0.name == name }) }

    /// Bytes of the names and values.
    var byteCount: Int { reduce(0) { $0 + $1.name.utf8.count + $1.value.count } }
}
