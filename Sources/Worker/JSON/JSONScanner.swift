import Glibc

/// Why the scanner stopped: the bytes are not JSON (RFC 8259), or they nest deeper than allowed.
struct JSONSyntaxError: Error, Sendable {
    enum Kind: Sendable { case syntax, tooDeep }
    var kind: Kind
    /// Byte offset where the problem was found.
    var offset: Int
    var message: StaticString
}

/// A number as the scanner read it.
enum JSONNumber: Sendable, Equatable {
    /// An integer literal (no fraction, no exponent) that fits in 18 digits.
    case integer(Int64)
    /// Anything else, as the nearest finite Double.
    case double(Double)

    /// The value when it is a whole number, saturated to Int64's range (`1e300` is `Int64.max`), else nil: a whole
    /// number too large for a field is out of that field's range, not of the wrong type.
    var wholeNumber: Int64? {
        switch self {
        case .integer(let value):
            return value
        case .double(let value):
            guard value.rounded(.towardZero) == value else { return nil }
            if value >= 0x1p63 { return .max }
            if value < -0x1p63 { return .min }
            return Int64(value)
        }
    }
}

/// A strict RFC 8259 scanner over UTF-8 bytes, for hand-written decoders of fixed shapes.
///
/// - Strings: escapes including `\uXXXX` and surrogate pairs (a lone surrogate is an error), raw control
///   characters rejected, invalid UTF-8 rejected.
/// - Numbers: the JSON grammar exactly (no leading zeros, no `1.`, no `.5`); a number whose value overflows
///   a Double is rejected, as Foundation does.
/// - Trailing commas are rejected (Foundation accepts them; this scanner follows the RFC).
///
/// - Important: the scanner borrows `buffer`; use it only inside the `withUnsafeBufferPointer` that made it.
struct JSONScanner {
    let buffer: UnsafeBufferPointer<UInt8>
    var index: Int
    let maximumDepth: Int

    init(buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.buffer = buffer
        self.index = 0
        self.maximumDepth = maximumDepth
    }

    // MARK: - Structure

    @inline(__always)
    var isAtEnd: Bool { index >= buffer.count }

    @inline(__always)
    func peek() -> UInt8? { index < buffer.count ? buffer[index] : nil }

    /// Skips a UTF-8 byte order mark at the very start (Foundation accepts one).
    mutating func skipByteOrderMark() {
        if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { index = 3 }
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    @inline(__always)
    func error(_ message: StaticString) -> JSONSyntaxError {
        JSONSyntaxError(kind: .syntax, offset: index, message: message)
    }

    /// Skips whitespace, then consumes `byte` or throws.
    @inline(__always)
    mutating func expect(_ byte: UInt8, _ message: StaticString) throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < buffer.count, buffer[index] == byte else { throw error(message) }
        index += 1
    }

    /// Iterates the members of an object: call at `{`; `body` is called with each key, positioned at its
    /// value (after the colon and whitespace), and must consume exactly that value.
    mutating func forEachMember(
        depth: Int,
        _ body: (inout JSONScanner, JSONKey) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) {
        guard try openObject(depth: depth) else { return }
        repeat {
            skipWhitespace()
            let key = try readMemberKey()
            try enterValue()
            try body(&self, key)
        } while try nextMember()
    }

    // A decoder that matches keys in place loops over the members itself with the steps below, as
    // ``forEachMember(depth:_:)`` does: open, then per member (whitespace,) key, value, next.

    /// Consumes an object's `{` (at `depth`); false when the object is `{}` (consumed whole).
    mutating func openObject(depth: Int) throws(JSONSyntaxError) -> Bool {
        guard depth <= maximumDepth else { throw JSONSyntaxError(kind: .tooDeep, offset: index, message: "too deep") }
        try expect(UInt8(ascii: "{"), "expected {")
        skipWhitespace()
        guard peek() == UInt8(ascii: "}") else { return true }
        index += 1
        return false
    }

    /// Reads a member's key at the current position (its opening quote).
    mutating func readMemberKey() throws(JSONSyntaxError) -> JSONKey {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a key") }
        return try readKey()
    }

    /// Consumes `quotedKey` (a key with its quotes, ASCII without escapes) when the bytes at the current position are
    /// exactly it: the key ``readMemberKey()`` would read, without scanning it.
    @inline(__always)
    mutating func consumeKey(_ quotedKey: StaticString) -> Bool {
        let count = quotedKey.utf8CodeUnitCount
        guard buffer.count - index >= count, let base = buffer.baseAddress,
            memcmp(base + index, quotedKey.utf8Start, count) == 0
        else { return false }
        index += count
        return true
    }

    /// After a key: consumes the `:` and the whitespace before the value.
    mutating func enterValue() throws(JSONSyntaxError) {
        try expect(UInt8(ascii: ":"), "expected :")
        skipWhitespace()
    }

    /// After a member's value: consumes the `,` before the next member (true) or the object's `}` (false).
    mutating func nextMember() throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard let next = peek() else { throw error("unterminated object") }
        index += 1
        if next == UInt8(ascii: "}") { return false }
        guard next == UInt8(ascii: ",") else { throw error("expected , or }") }
        return true
    }

    // MARK: - Values

    /// Validates and skips any value; returns the range of bytes it occupied.
    @discardableResult
    mutating func skipValue(depth: Int) throws(JSONSyntaxError) -> Range<Int> {
        skipWhitespace()
        let start = index
        guard let byte = peek() else { throw error("expected a value") }
        switch byte {
        case UInt8(ascii: "\""):
            _ = try readString()
        case UInt8(ascii: "{"):
            try forEachMember(depth: depth + 1) { (scanner, _) throws(JSONSyntaxError) in
                try scanner.skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            guard depth + 1 <= maximumDepth else {
                throw JSONSyntaxError(kind: .tooDeep, offset: index, message: "too deep")
            }
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
            } else {
                while true {
                    try skipValue(depth: depth + 1)
                    skipWhitespace()
                    guard let next = peek() else { throw error("unterminated array") }
                    index += 1
                    if next == UInt8(ascii: "]") { break }
                    guard next == UInt8(ascii: ",") else { throw error("expected , or ]") }
                }
            }
        case UInt8(ascii: "t"): try readLiteral("true")
        case UInt8(ascii: "f"): try readLiteral("false")
        case UInt8(ascii: "n"): try readLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try readNumber()
        default:
            throw error("expected a value")
        }
        return start..<index
    }

    /// Consumes `null` if it is next; returns whether it did.
    mutating func consumeNull() throws(JSONSyntaxError) -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try readLiteral("null")
        return true
    }

    mutating func readLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - index >= count else { throw error("bad literal") }
        let base = literal.utf8Start
        for offset in 0..<count where buffer[index + offset] != base[offset] {
            throw error("bad literal")
        }
        index += count
    }

    /// Reads a number at the current position.
    mutating func readNumber() throws(JSONSyntaxError) -> JSONNumber {
        let start = index
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var value: Int64 = 0
        var digits = 0
        guard let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw error("expected a digit")
        }
        if first == UInt8(ascii: "0") {
            index += 1
            digits = 1
            if let next = peek(), next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
                throw error("leading zero")
            }
        } else {
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if digits < 18 { value = value &* 10 &+ Int64(byte &- UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            var fractionDigits = 0
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0 else { throw error("expected a fraction digit") }
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            var exponentDigits = 0
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                exponentDigits += 1
                index += 1
            }
            guard exponentDigits > 0 else { throw error("expected an exponent digit") }
        }
        if isInteger && digits <= 18 { return .integer(negative ? -value : value) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw error("number out of range") }
        return .double(double)
    }

    /// A string at the current position (its opening quote), scanned up to its closing quote.
    private enum ScannedString {
        /// No escape: the bytes between the quotes, and whether any is not ASCII (then they must be checked as
        /// UTF-8).
        case plain(UnsafeBufferPointer<UInt8>, start: Int, hasNonASCII: Bool)
        /// A backslash at or after `start` (the first content byte): ``readEscapedString(from:)`` reads it.
        case escaped(start: Int)
    }

    /// Scans a string up to its closing quote (plain) or its first backslash (escaped); rejects control characters
    /// and an unterminated string.
    private mutating func scanString() throws(JSONSyntaxError) -> ScannedString {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string") }
        index += 1
        let start = index
        var high: UInt8 = 0
        while true {
            index = Self.skipPlainWords(buffer, from: index)
            guard index < buffer.count else { break }
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: buffer[start..<index])
                index += 1
                return .plain(slice, start: start, hasNonASCII: high & 0x80 != 0)
            }
            if byte == UInt8(ascii: "\\") { return .escaped(start: start) }
            guard byte >= 0x20 else { throw error("control character in string") }
            high |= byte
            index += 1
        }
        throw error("unterminated string")
    }

    /// The index of the next byte of `buffer` from `start` to look at one by one: the first that may need a look (see
    /// ``flaggedBytes(_:)``), or one of the last seven; `buffer.count` at the end. Bytes go eight at a time (most
    /// strings are plain ASCII throughout). With `wordTail`, the last one to seven bytes of a buffer of eight or more go
    /// as its last word too (the bytes already seen shifted out, plain ones shifted in): the writer's buffers are single
    /// strings, whose tails matter; the scanner's is the whole event, where the tail is its last bytes.
    @inline(__always)
    static func skipPlainWords(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int, wordTail: Bool = false) -> Int {
        guard let base = buffer.baseAddress else { return start }
        var index = start
        while index + 8 <= buffer.count {
            let flagged = flaggedBytes(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: index, as: UInt64.self))
            if flagged != 0 { return index + flagged.trailingZeroBitCount >> 3 }
            index += 8
        }
        let remaining = buffer.count - index
        guard wordTail, remaining > 0, buffer.count >= 8 else { return index }
        let last = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: buffer.count - 8, as: UInt64.self)
        // Eight `A`s pad the word: a byte no ``flaggedBytes(_:)`` flags, so a flagged byte is one of the tail's.
        let padding: UInt64 = 0x4141_4141_4141_4141
        let tail = last >> UInt64(8 * (8 - remaining)) | padding << UInt64(8 * remaining)
        let flagged = flaggedBytes(tail)
        return flagged != 0 ? index + flagged.trailingZeroBitCount >> 3 : buffer.count
    }

    /// Whether any of the eight bytes in `word` is a quote, a backslash, a control character or not ASCII: the bytes
    /// that end a string, start an escape, are rejected or must be checked as UTF-8.
    @inline(__always)
    static func needsByteScan(_ word: UInt64) -> Bool { flaggedBytes(word) != 0 }

    /// The high bit of each byte of `word` (loaded little-endian: the first byte lowest) that may need a look as
    /// ``needsByteScan(_:)`` says; the lowest set bit marks exactly the first byte that does. (Per byte b,
    /// `(b - n) & ~b & 0x80` is non-zero exactly when b < n for n ≤ 0x80 — a zero test for n = 1 after an XOR — and a
    /// borrow into the next byte only happens after a byte that already matched, so bits above the lowest may be
    /// false but the lowest is exact, and the word is 0 exactly when no byte needs a look.)
    @inline(__always)
    static func flaggedBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let isQuote = (quote &- ones) & ~quote
        let isBackslash = (backslash &- ones) & ~backslash
        let isControl = (word &- ones &* 0x20) & ~word
        return (isQuote | isBackslash | isControl | word) & highBits
    }

    /// Reads an object key (a string) at the current position without building a `String`: the same validation as
    /// ``readString()``.
    mutating func readKey() throws(JSONSyntaxError) -> JSONKey {
        switch try scanString() {
        case .plain(let slice, let start, let hasNonASCII):
            if hasNonASCII, String(validating: slice, as: UTF8.self) == nil {
                throw JSONSyntaxError(kind: .syntax, offset: start, message: "invalid UTF-8")
            }
            return JSONKey(raw: slice)
        case .escaped(let start):
            return JSONKey(decoded: Array(try readEscapedString(from: start).utf8))
        }
    }

    /// Reads a string at the current position (which must be its opening quote).
    mutating func readString() throws(JSONSyntaxError) -> String {
        switch try scanString() {
        case .plain(let slice, let start, let hasNonASCII):
            if !hasNonASCII { return String(decoding: slice, as: UTF8.self) }
            guard let string = String(validating: slice, as: UTF8.self) else {
                throw JSONSyntaxError(kind: .syntax, offset: start, message: "invalid UTF-8")
            }
            return string
        case .escaped(let start):
            return try readEscapedString(from: start)
        }
    }

    /// Reads a string at the current position (its opening quote) as ``readString()`` does, validating it the same
    /// way, and returns where it is instead of a `String`.
    mutating func readSpan() throws(JSONSyntaxError) -> JSONSpan {
        switch try scanString() {
        case .plain(let slice, let start, let hasNonASCII):
            if hasNonASCII, String(validating: slice, as: UTF8.self) == nil {
                throw JSONSyntaxError(kind: .syntax, offset: start, message: "invalid UTF-8")
            }
            return JSONSpan(start: start, count: slice.count, isEscaped: false)
        case .escaped(let start):
            _ = try readEscapedString(from: start)
            return JSONSpan(start: start, count: index - 1 - start, isEscaped: true)
        }
    }

    private mutating func readEscapedString(from start: Int) throws(JSONSyntaxError) -> String {
        var bytes = [UInt8](UnsafeBufferPointer(rebasing: buffer[start..<index]))
        bytes.reserveCapacity(bytes.count + 32)
        while index < buffer.count {
            let byte = buffer[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: bytes, as: UTF8.self) else {
                    throw JSONSyntaxError(kind: .syntax, offset: start, message: "invalid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                guard index < buffer.count else { throw error("unterminated escape") }
                let escape = buffer[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = UInt32(try readHex4())
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard buffer.count - index >= 2, buffer[index] == UInt8(ascii: "\\"),
                            buffer[index + 1] == UInt8(ascii: "u")
                        else { throw error("lone high surrogate") }
                        index += 2
                        let low = UInt32(try readHex4())
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("bad low surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("lone low surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("bad scalar") }
                    bytes.append(contentsOf: UTF8.encode(unicode)!)
                default:
                    throw error("bad escape")
                }
            default:
                guard byte >= 0x20 else { throw error("control character in string") }
                bytes.append(byte)
            }
        }
        throw error("unterminated string")
    }

    private mutating func readHex4() throws(JSONSyntaxError) -> UInt16 {
        guard buffer.count - index >= 4 else { throw error("short \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = buffer[index]
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
            default: throw error("bad hex digit")
            }
            value = value << 4 | UInt16(nibble)
            index += 1
        }
        return value
    }
}
