import Telemetry

/// An `apns-id`: a canonical UUID (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`) kept as its 16 bytes, so a push and its
/// answer carry it without a `String` (one allocation per push fewer); its text is lowercase.
///
/// Read and written eight hex digits at a time (``ByteLanes``): the 32 digits are the text without its dashes, four
/// words of eight, and each word is four of the 16 bytes.
package struct APNsID: Hashable, Sendable, CustomStringConvertible {
    /// Bytes 0–7, the first the most significant.
    private let high: UInt64
    /// Bytes 8–15.
    private let low: UInt64

    /// The length of the text: 32 hex digits and 4 dashes.
    package static let textCount = 36

    /// The text's five runs of digits (8-4-4-4-12): where each starts in the text and among the 32 digits, and its
    /// length.
    @inline(__always)
    private static func forEachRun(_ body: (_ textStart: Int, _ digitStart: Int, _ count: Int) -> Void) {
        body(0, 0, 8)
        body(9, 8, 4)
        body(14, 12, 4)
        body(19, 16, 4)
        body(24, 20, 12)
    }

    /// Reads a canonical UUID with hex digits in either case; nil for anything else.
    package init?(_ text: String) {
        guard let id = text.withUTF8InPlace({ APNsID(utf8: $0) }) else { return nil }
        self = id
    }

    /// ``init(_:)`` over UTF-8 bytes.
    package init?(utf8 text: UnsafeBufferPointer<UInt8>) {
        guard text.count == Self.textCount, let base = text.baseAddress else { return nil }
        let dash = UInt8(ascii: "-")
        guard text[8] == dash, text[13] == dash, text[18] == dash, text[23] == dash else { return nil }
        // The 32 digits without the dashes, as four words.
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { digits in
            Self.forEachRun { textStart, digitStart, count in
                (digits.baseAddress! + digitStart).copyMemory(from: base + textStart, byteCount: count)
            }
        }
        var check = HexDigits()
        check.add(word: words.0)
        check.add(word: words.1)
        check.add(word: words.2)
        check.add(word: words.3)
        guard check.allHex else { return nil }
        high = UInt64(Self.value(of: words.0)) << 32 | UInt64(Self.value(of: words.1))
        low = UInt64(Self.value(of: words.2)) << 32 | UInt64(Self.value(of: words.3))
    }

    /// The lowercase text.
    package var description: String {
        String(unsafeUninitializedCapacity: Self.textCount) { buffer in
            write(to: UnsafeMutableRawBufferPointer(buffer))
            return Self.textCount
        }
    }

    /// Writes the lowercase text into the first ``textCount`` bytes of `target`.
    package func write(to target: UnsafeMutableRawBufferPointer) {
        func digits(_ word: UInt64, _ shift: UInt64) -> UInt64 {
            Self.digits(of: UInt32(truncatingIfNeeded: word >> shift))
        }
        var words = (digits(high, 32), digits(high, 0), digits(low, 32), digits(low, 0))
        withUnsafeBytes(of: &words) { digits in
            Self.forEachRun { textStart, digitStart, count in
                if textStart > 0 { target[textStart - 1] = UInt8(ascii: "-") }
                (target.baseAddress! + textStart).copyMemory(from: digits.baseAddress! + digitStart, byteCount: count)
            }
        }
    }

    /// The value of eight hex digits (either case; checked before), the first digit the most significant.
    @inline(__always)
    private static func value(of word: UInt64) -> UInt32 {
        let word = UInt64(littleEndian: word)  // lane i: the i-th digit
        // A digit's low four bits, plus 9 for a letter (bit 6 set): its value, one per lane.
        let nibbles = (word & 0x0F0F_0F0F_0F0F_0F0F) &+ ((word >> 6) & ByteLanes.ones) &* 9
        // Lanes 2i and 2i+1 into byte i: the first digit of each pair is the high nibble.
        let pairs = ((nibbles << 4) | (nibbles >> 8)) & 0x00FF_00FF_00FF_00FF
        let quads = (pairs | (pairs >> 8)) & 0x0000_FFFF_0000_FFFF
        let bytes = UInt32(truncatingIfNeeded: quads | (quads >> 16))  // byte 0 the first two digits
        return bytes.byteSwapped
    }

    /// The eight lowercase hex digits of `value`, the first digit in lane 0 (``value(of:)``'s inverse).
    @inline(__always)
    private static func digits(of value: UInt32) -> UInt64 {
        let bytes = UInt64(value.byteSwapped)
        let quads = (bytes | (bytes << 16)) & 0x0000_FFFF_0000_FFFF
        let pairs = (quads | (quads << 8)) & 0x00FF_00FF_00FF_00FF
        let nibbles = ((pairs >> 4) & 0x000F_000F_000F_000F) | ((pairs & 0x000F_000F_000F_000F) << 8)
        // 1 in each lane of ten or more: a letter, 39 past where a digit would be (`'a' - '0' - 10`).
        let letters = ((nibbles &+ ByteLanes.ones &* 0x76) & ByteLanes.highBits) >> 7
        return (nibbles &+ ByteLanes.ones &* UInt64(UInt8(ascii: "0")) &+ letters &* 39).littleEndian
    }
}
