/// An object member's key as ``JSONScanner/forEachMember(depth:_:)`` found it: its decoded UTF-8 bytes, matched
/// against the expected keys without building a `String` (keys without escapes are a slice of the scanner's buffer).
struct JSONKey {
    /// The key's bytes when it has no escapes (valid while the scanner's buffer is).
    private let raw: UnsafeBufferPointer<UInt8>?
    /// The decoded key when it had escapes.
    private let decoded: [UInt8]

    init(raw: UnsafeBufferPointer<UInt8>) {
        self.raw = raw
        decoded = []
    }

    init(decoded: [UInt8]) {
        raw = nil
        self.decoded = decoded
    }

    /// Length in UTF-8 bytes.
    var count: Int { raw?.count ?? decoded.count }

    /// Whether the key is exactly `literal` (byte for byte, as the keys of the fixed shapes are ASCII).
    func equals(_ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard count == length else { return false }
        let expected = literal.utf8Start
        if let raw {
            for index in 0..<length where raw[index] != expected[index] { return false }
            return true
        }
        for index in 0..<length where decoded[index] != expected[index] { return false }
        return true
    }

    /// The key as a `String` (the scanner validated its UTF-8).
    var string: String {
        if let raw { return String(decoding: raw, as: UTF8.self) }
        return String(decoding: decoded, as: UTF8.self)
    }
}
