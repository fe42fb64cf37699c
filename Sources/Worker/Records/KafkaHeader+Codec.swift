import Kafka

/// Headers as callpush writes and reads them: Kafka allows a name to appear more than once; readers here take the
/// last.
extension KafkaHeader {
    init(name: String, integer: Int64) {
        self.init(name: name, value: HeaderCodec.encode(integer))
    }

    /// The value as UTF-8 text (invalid bytes replaced).
    var text: String { String(decoding: value, as: UTF8.self) }
}

extension [KafkaHeader] {
    /// The last header named `name`.
    func last(named name: String) -> KafkaHeader? { last(where: { $0.name == name }) }

    /// Bytes of the names and values (what Kafka's size limits count besides key and value).
    var byteCount: Int { reduce(0) { $0 + $1.name.utf8.count + $1.value.count } }
}
