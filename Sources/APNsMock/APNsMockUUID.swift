/// A UUID in the canonical 8-4-4-4-12 form, kept as its 128 bits and the case of each of its 32 hex digits: a
/// request's `apns-id` read from its bytes (``init(text:)``) and written back exactly as sent, or a generated one.
/// Written as text only where it is sent (``write(to:)``: straight into the response's header block, no `String`).
package struct APNsMockUUID: Sendable, Hashable {
    let high: UInt64
    let low: UInt64
    /// Bit `i` set: hex digit `i` (from the left) is written as an uppercase letter when it is one.
    let uppercaseDigits: UInt32

    /// The canonical form's length.
    package static let textLength = 36

    /// A UUID written with all-uppercase or all-lowercase hex digits.
    init(high: UInt64, low: UInt64, uppercase: Bool) {
        self.high = high
        self.low = low
        uppercaseDigits = uppercase ? .max : 0
    }

    /// Reads a canonical UUID, hex digits in any case (APNs documents lowercase; the mock accepts both and echoes
    /// the value as sent); nil when `text` is not one.
    init?(text: UnsafeBufferPointer<UInt8>) {
        guard text.count == Self.textLength else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var uppercase: UInt32 = 0
        var digit = 0
        for index in 0..<Self.textLength {
            let byte = text[index]
            switch index {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                guard let value = APNsMockBytes.hexValue(byte) else { return nil }
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F") { uppercase |= 1 << UInt32(digit) }
                if digit < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
                digit += 1
            }
        }
        self.high = high
        self.low = low
        uppercaseDigits = uppercase
    }

    /// Writes the canonical form into the first ``textLength`` bytes of `buffer`.
    package func write(to buffer: UnsafeMutableBufferPointer<UInt8>) {
        guard let start = buffer.baseAddress, buffer.count >= Self.textLength else { return }
        let output = UnsafeMutableRawPointer(start)
        // 8-4-4-4-12: each 32-bit half of `high` and `low` is 8 digits; the dashes split the middle two.
        let first = Self.digits(UInt32(truncatingIfNeeded: high >> 32), uppercase: uppercaseDigits & 0xFF)
        let second = Self.digits(UInt32(truncatingIfNeeded: high), uppercase: uppercaseDigits >> 8 & 0xFF)
        let third = Self.digits(UInt32(truncatingIfNeeded: low >> 32), uppercase: uppercaseDigits >> 16 & 0xFF)
        let fourth = Self.digits(UInt32(truncatingIfNeeded: low), uppercase: uppercaseDigits >> 24)
        output.storeBytes(of: first.littleEndian, as: UInt64.self)
        output.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 8, as: UInt8.self)
        output.storeBytes(of: UInt32(truncatingIfNeeded: second).littleEndian, toByteOffset: 9, as: UInt32.self)
        output.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 13, as: UInt8.self)
        output.storeBytes(of: UInt32(truncatingIfNeeded: second >> 32).littleEndian, toByteOffset: 14, as: UInt32.self)
        output.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 18, as: UInt8.self)
        output.storeBytes(of: UInt32(truncatingIfNeeded: third).littleEndian, toByteOffset: 19, as: UInt32.self)
        output.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 23, as: UInt8.self)
        output.storeBytes(of: UInt32(truncatingIfNeeded: third >> 32).littleEndian, toByteOffset: 24, as: UInt32.self)
        output.storeBytes(of: fourth.littleEndian, toByteOffset: 28, as: UInt64.self)
    }

    /// The 8 hex digits of `word`, most significant first, as the bytes of a 64-bit value from its low byte up;
    /// digit `i`'s letter uppercase when bit `i` of `uppercase` is set.
    private static func digits(_ word: UInt32, uppercase: UInt32) -> UInt64 {
        // One nibble per byte, the most significant nibble in the lowest byte.
        var value = UInt64(word)
        value = (value & 0xFFFF_0000) << 16 | (value & 0x0000_FFFF)
        value = (value & 0x0000_FF00_0000_FF00) << 8 | (value & 0x0000_00FF_0000_00FF)
        value = (value & 0x00F0_00F0_00F0_00F0) << 4 | (value & 0x000F_000F_000F_000F)
        value = value.byteSwapped
        // 0x01 in every byte that holds a letter (a nibble above 9), then "0" + nibble, + 0x27 more for "a"-"f" or
        // 0x07 more for "A"-"F".
        let letters = (value &+ 0x7676_7676_7676_7676) >> 7 & 0x0101_0101_0101_0101
        var uppercaseBytes: UInt64 = uppercase == 0xFF ? .max : 0
        if uppercase != 0 && uppercase != 0xFF {
            for digit in 0..<8 where uppercase & (1 << UInt32(digit)) != 0 { uppercaseBytes |= 0xFF << UInt64(8 * digit) }
        }
        let offsets = (0x2727_2727_2727_2727 & ~uppercaseBytes) | (0x0707_0707_0707_0707 & uppercaseBytes)
        return value &+ 0x3030_3030_3030_3030 &+ letters &* 0xFF & offsets
    }

    /// The canonical form as a `String`.
    var text: String {
        String(unsafeUninitializedCapacity: Self.textLength) { buffer in
            write(to: buffer)
            return Self.textLength
        }
    }
}
