/// ASCII hex digits, checked eight bytes at a time: device tokens (64 digits) and UUIDs (32) on every push, and the
/// mock APNs server's check of the token in every request's path.
///
/// Words are classified with lane-wise range checks and the results accumulated: ``allHex`` and ``hasUppercase``
/// cover every word added: a word costs about what two or three bytes cost in a byte loop.
package struct HexDigits {
    /// The high bit of each lane of every word added that held no hex digit.
    private var notHex: UInt64 = 0
    /// The high bit of each lane of every word added that held an uppercase hex letter.
    private var uppercase: UInt64 = 0

    /// Every byte added is a hex digit (`0-9`, `a-f`, `A-F`).
    package var allHex: Bool { notHex == 0 }
    /// Some byte added is an uppercase hex letter.
    package var hasUppercase: Bool { uppercase != 0 }

    package init() {}

    /// `bytes`, whole words first, then a shorter tail padded with `0` digits.
    package static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> HexDigits {
        var digits = HexDigits()
        guard let base = bytes.baseAddress else { return digits }
        let raw = UnsafeRawPointer(base)
        var offset = 0
        while offset + 8 <= bytes.count {
            digits.add(word: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        if offset < bytes.count {
            var word = ByteLanes.ones &* UInt64(UInt8(ascii: "0"))
            withUnsafeMutableBytes(of: &word) { lanes in
                lanes.copyMemory(from: UnsafeRawBufferPointer(start: raw + offset, count: bytes.count - offset))
            }
            digits.add(word: word)
        }
        return digits
    }

    /// Adds the eight bytes of `word` (in memory order: lane `i` is bits `8i..<8i+8` on little-endian machines;
    /// the check is the same for every lane, so the byte order does not matter).
    @inline(__always)
    package mutating func add(word: UInt64) {
        let ascii = ~word & ByteLanes.highBits
        let low = word & ~ByteLanes.highBits
        let digit = ByteLanes.inRange(low, UInt8(ascii: "0"), UInt8(ascii: "9"))
        let lower = ByteLanes.inRange(low, UInt8(ascii: "a"), UInt8(ascii: "f"))
        let upper = ByteLanes.inRange(low, UInt8(ascii: "A"), UInt8(ascii: "F")) & ascii
        notHex |= ((digit | lower) & ascii | upper) ^ ByteLanes.highBits
        uppercase |= upper
    }
}
