internal import APNs

/// Byte-level checks on header values for the per-request path: no Foundation, no case-converted copies, no
/// allocation.
enum APNsMockBytes {
    /// Runs `body` on `text`'s UTF-8 bytes: in place for native strings (all strings that come off the wire), copied
    /// for bridged ones.
    static func withBytes<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// `a == b` ignoring ASCII case (HTTP/2 header names arrive lowercase, so the exact comparison usually
    /// decides; tests may pass other cases).
    static func equalIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        guard a.utf8.count == b.utf8.count else { return false }
        return withBytes(a) { x in
            withBytes(b) { y in
                for index in 0..<x.count where x[index] != y[index] {
                    let lower = x[index] | 0x20
                    guard lower == y[index] | 0x20, lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else { return false }
                }
                return true
            }
        }
    }

    /// `text` starts with `prefix`, `prefix` given in lowercase, ignoring the case of `text`'s ASCII letters.
    static func hasPrefixIgnoringASCIICase(_ text: String, _ prefix: StaticString) -> Bool {
        guard text.utf8.count >= prefix.utf8CodeUnitCount else { return false }
        return withBytes(text) { bytes in
            for index in 0..<prefix.utf8CodeUnitCount {
                let byte = bytes[index]
                let expected = prefix.utf8Start[index]
                let isLetter = expected >= UInt8(ascii: "a") && expected <= UInt8(ascii: "z")
                guard byte == expected || (isLetter && byte | 0x20 == expected) else { return false }
            }
            return true
        }
    }

    /// A canonical UUID, 8-4-4-4-12 hex digits in either case (APNs documents lowercase; the mock accepts both and
    /// echoes the value as sent).
    static func isUUID(_ text: String) -> Bool {
        guard text.utf8.count == 36 else { return false }
        return withBytes(text) { bytes in
            for index in 0..<36 {
                switch index {
                case 8, 13, 18, 23: guard bytes[index] == UInt8(ascii: "-") else { return false }
                default: guard DeviceToken.isHexDigit(bytes[index]) else { return false }
                }
            }
            return true
        }
    }
}
