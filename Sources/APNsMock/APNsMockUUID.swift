/// A UUID in the canonical 8-4-4-4-12 form, kept as its 128 bits and the case of each of its 32 hex digits: a
/// request's `apns-id` read from its bytes (``init(text:)``) and written back exactly as sent, or a generated one.
/// Written as text only where it is sent (``write(to:)``: straight into the response's header block, no `String`).
struct APNsMockUUID: Sendable, Hashable {
    let high: UInt64
    let low: UInt64
    /// Bit `i` set: hex digit `i` (from the left) is written as an uppercase letter when it is one.
    let uppercaseDigits: UInt32

    /// The canonical form's length.
    static let textLength = 36

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
    func write(to buffer: UnsafeMutableBufferPointer<UInt8>) {
        var position = 0
        var digit = 0
        /// Hex digits `nibbles` of `word`, counted from the most significant, then a dash unless last.
        func put(_ word: UInt64, _ nibbles: Range<Int>) {
            for nibble in nibbles {
                let value = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * nibble)) & 0xF
                if value < 10 {
                    buffer[position] = UInt8(ascii: "0") + value
                } else {
                    let letterBase = uppercaseDigits & (1 << UInt32(digit)) != 0 ? UInt8(ascii: "A") : UInt8(ascii: "a")
                    buffer[position] = letterBase + value - 10
                }
                position += 1
                digit += 1
            }
            if position < Self.textLength {
                buffer[position] = UInt8(ascii: "-")
                position += 1
            }
        }
        put(high, 0..<8)
        put(high, 8..<12)
        put(high, 12..<16)
        put(low, 0..<4)
        put(low, 4..<16)
    }

    /// The canonical form as a `String`.
    var text: String {
        String(unsafeUninitializedCapacity: Self.textLength) { buffer in
            write(to: buffer)
            return Self.textLength
        }
    }
}
