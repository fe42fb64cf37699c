/// One record header: a name and raw bytes.
package struct KafkaHeader: Hashable, Sendable {
    package var name: String
    package var value: [UInt8]

    package init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    /// A header whose value is the UTF-8 of `string` (ASCII decimal numbers read well in `kcat`).
    package init(name: String, string: String) {
        self.init(name: name, value: Array(string.utf8))
    }
}
