internal import APNs
import Glibc

/// Byte-level checks on header bytes for the per-request path: no Foundation, no `String`, no case-converted
/// copies, no allocation.
enum APNsMockBytes {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    /// `bytes` equal `text` exactly (header names and short values: 8-byte words, no call to `memcmp`).
    static func equal(_ bytes: Bytes, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count == count else { return false }
        guard count > 0, let base = bytes.baseAddress else { return count == 0 }
        let a = UnsafeRawPointer(base)
        let b = UnsafeRawPointer(text.utf8Start)
        switch count {
        case 8...16:
            return a.loadUnaligned(as: UInt64.self) == b.loadUnaligned(as: UInt64.self)
                && a.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        case 4..<8:
            return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
                && a.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                == b.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        default:
            return memcmp(a, b, count) == 0
        }
    }

    /// `bytes` equal `other` exactly.
    static func equal(_ bytes: Bytes, bytes other: [UInt8]) -> Bool {
        bytes.count == other.count
            && (bytes.isEmpty || other.withUnsafeBufferPointer { memcmp(bytes.baseAddress!, $0.baseAddress!, bytes.count) == 0 })
    }

    /// `bytes` equal `text`'s UTF-8 exactly.
    static func equal(_ bytes: Bytes, string text: String) -> Bool {
        guard bytes.count == text.utf8.count else { return false }
        if bytes.isEmpty { return true }
        if let same = text.utf8.withContiguousStorageIfAvailable({ memcmp(bytes.baseAddress!, $0.baseAddress!, bytes.count) == 0 }) {
            return same
        }
        return bytes.elementsEqual(text.utf8)
    }

    /// `a == b` ignoring ASCII case (HTTP/2 header names arrive lowercase, so the exact comparison usually decides;
    /// tests may pass other cases).
    static func equalIgnoringASCIICase(_ a: Bytes, _ b: Bytes) -> Bool {
        guard a.count == b.count else { return false }
        for index in 0..<a.count where a[index] != b[index] {
            let lower = a[index] | 0x20
            guard lower == b[index] | 0x20, lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else { return false }
        }
        return true
    }

    /// `bytes` equal `lowercase` (given in lowercase) ignoring the case of `bytes`' ASCII letters.
    static func equalIgnoringASCIICase(_ bytes: Bytes, lowercase: StaticString) -> Bool {
        bytes.count == lowercase.utf8CodeUnitCount && (equal(bytes, lowercase) || hasPrefixIgnoringASCIICase(bytes, lowercase))
    }

    /// `bytes` start with `prefix`, `prefix` given in lowercase, ignoring the case of `bytes`' ASCII letters.
    static func hasPrefixIgnoringASCIICase(_ bytes: Bytes, _ prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        for index in 0..<prefix.utf8CodeUnitCount {
            let byte = bytes[index]
            let expected = prefix.utf8Start[index]
            let isLetter = expected >= UInt8(ascii: "a") && expected <= UInt8(ascii: "z")
            guard byte == expected || (isLetter && byte | 0x20 == expected) else { return false }
        }
        return true
    }

    /// The value of a hex digit (either case), or nil.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A decimal integer as `Int64(String)` reads one: an optional `+` or `-`, then one or more ASCII digits, in
    /// range; nil otherwise.
    static func integer(_ bytes: Bytes) -> Int64? {
        var index = 0
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            index = 1
        }
        guard index < bytes.count else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative
                ? shifted.subtractingReportingOverflow(Int64(digit)) : shifted.addingReportingOverflow(Int64(digit))
            guard !overflow, !overflow2 else { return nil }
            value = next
            index += 1
        }
        return value
    }
}
