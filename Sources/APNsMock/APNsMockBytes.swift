/// Byte-level checks on header values for the per-request path: no Foundation, no case-converted copies, no
/// allocation.
enum APNsMockBytes {
    /// `a == b` ignoring ASCII case (HTTP/2 header names arrive lowercase; tests may pass other cases).
    static func equalIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        for (x, y) in zip(a.utf8, b.utf8) where x != y {
            guard x | 0x20 == y | 0x20, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(x | 0x20) else { return false }
        }
        return true
    }

    /// `text` starts with `prefix`, `prefix` given in lowercase, ignoring the case of `text`'s ASCII letters.
    static func hasPrefixIgnoringASCIICase(_ text: String, _ prefix: StaticString) -> Bool {
        guard text.utf8.count >= prefix.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        for (byte, lower) in zip(text.utf8, expected) where byte != lower {
            guard byte | 0x20 == lower, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) else { return false }
        }
        return true
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }

    /// A canonical UUID, 8-4-4-4-12 hex digits in either case (APNs documents lowercase; the mock accepts both and
    /// echoes the value as sent).
    static func isUUID(_ text: String) -> Bool {
        guard text.utf8.count == 36 else { return false }
        var index = 0
        for byte in text.utf8 {
            switch index {
            case 8, 13, 18, 23: guard byte == UInt8(ascii: "-") else { return false }
            default: guard isHexDigit(byte) else { return false }
            }
            index += 1
        }
        return true
    }
}
