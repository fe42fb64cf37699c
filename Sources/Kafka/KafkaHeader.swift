/// One record header: a name and raw bytes.
public struct KafkaHeader: Hashable, Sendable {
    public var name: String
    public var value: [UInt8]

    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    /// A header whose value is the UTF-8 of `string` (ASCII decimal numbers read well in `kcat`).
    public init(name: String, string: String) {
        self.init(name: name, value: Array(string.utf8))
    }
}
