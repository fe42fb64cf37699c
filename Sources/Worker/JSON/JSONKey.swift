/// An object member's key as ``JSONScanner/forEachMember(depth:_:)`` found it, or a string value read with
/// ``JSONScanner/readKey()`` (the event's `type`, `push` and `environment`): its decoded UTF-8 bytes, matched
/// against the expected keys without building a `String` (keys without escapes are a slice of the scanner's buffer).
struct JSONKey {
    private enum Bytes {
        /// The key's bytes when it has no escapes (valid while the scanner's buffer is).
        case raw(UnsafeBufferPointer<UInt8>)
        /// The decoded key when it had escapes.
        case decoded([UInt8])
    }

    // An enum, not a buffer beside an array: a key without escapes (nearly every key) then carries no reference, and
    // passing it costs no retain and release.
    private let bytes: Bytes

    init(raw: UnsafeBufferPointer<UInt8>) { bytes = .raw(raw) }

    init(decoded: [UInt8]) { bytes = .decoded(decoded) }

    /// Length in UTF-8 bytes.
    var count: Int {
        switch bytes {
        case .raw(let raw): raw.count
        case .decoded(let decoded): decoded.count
        }
    }

    /// Whether the key is exactly `literal` (byte for byte, as the keys of the fixed shapes are ASCII).
    func equals(_ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard count == length else { return false }
        switch bytes {
        case .raw(let raw): return Self.sameBytes(UnsafeRawPointer(raw.baseAddress), literal, length)
        case .decoded(let decoded): return decoded.withUnsafeBytes { Self.sameBytes($0.baseAddress, literal, length) }
        }
    }

    /// The `length` bytes at `bytes` are `literal`'s. Keys are 4–14 bytes: two overlapping word loads decide, instead
    /// of a byte loop (the decoder matches 14 keys per event).
    private static func sameBytes(_ bytes: UnsafeRawPointer?, _ literal: StaticString, _ length: Int) -> Bool {
        guard length > 0, let bytes else { return length == 0 }
        let expected = UnsafeRawPointer(literal.utf8Start)
        switch length {
        case 8...16:
            return bytes.loadUnaligned(as: UInt64.self) == expected.loadUnaligned(as: UInt64.self)
                && bytes.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
                == expected.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
        case 4..<8:
            return bytes.loadUnaligned(as: UInt32.self) == expected.loadUnaligned(as: UInt32.self)
                && bytes.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
                == expected.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
        default:
            for index in 0..<length where bytes.load(fromByteOffset: index, as: UInt8.self)
                != expected.load(fromByteOffset: index, as: UInt8.self) { return false }
            return true
        }
    }

    /// The key as a `String` (the scanner validated its UTF-8).
    var string: String {
        switch bytes {
        case .raw(let raw): String(decoding: raw, as: UTF8.self)
        case .decoded(let decoded): String(decoding: decoded, as: UTF8.self)
        }
    }
}
