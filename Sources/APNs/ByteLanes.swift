/// Eight bytes at a time in a `UInt64`, one byte per lane: the range check ``HexDigits`` classifies hex digits with,
/// and the constants ``APNsID`` reads and writes its digits with.
package enum ByteLanes {
    /// `0x01` in every lane: `ones &* UInt64(b)` puts `b` in every lane.
    package static let ones: UInt64 = 0x0101_0101_0101_0101
    /// The high bit of every lane.
    package static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each lane of `lanes` (every lane below 0x80) whose value is in `low...high`. Seven bits per
    /// lane: the sums stay inside their lane (no carry into the next byte).
    @inline(__always)
    package static func inRange(_ lanes: UInt64, _ low: UInt8, _ high: UInt8) -> UInt64 {
        let atLeastLow = lanes &+ ones &* UInt64(0x80 - low)
        let aboveHigh = lanes &+ ones &* UInt64(0x7F - high)
        return atLeastLow & ~aboveHigh & highBits
    }
}
