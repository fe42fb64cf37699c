internal import APNs

/// Checks that a payload is one JSON object (RFC 8259: strings with valid escapes and valid UTF-8, no raw control
/// characters, the number grammar, `true`/`false`/`null`, at most ``maximumDepth`` levels), without building
/// anything: the mock only needs yes or no, once per request, with no allocation.
struct APNsMockJSONValidator {
    /// Deeper nesting is refused (Foundation's limit is 512; an APNs payload is at most 5120 bytes anyway).
    static let maximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// True when `payload` is exactly one JSON object, optionally surrounded by whitespace.
    static func isObject(_ payload: [UInt8]) -> Bool {
        payload.withUnsafeBufferPointer { buffer in
            var validator = APNsMockJSONValidator(buffer)
            validator.skipWhitespace()
            guard validator.current == UInt8(ascii: "{"), validator.value(depth: 0) else { return false }
            validator.skipWhitespace()
            return validator.index == buffer.count
        }
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    /// Consumes `byte` after optional whitespace.
    private mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard current == byte else { return false }
        index += 1
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        skipWhitespace()
        guard let byte = current else { return false }
        switch byte {
        case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), keyed: true, depth: depth + 1)
        case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), keyed: false, depth: depth + 1)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    /// An object (`keyed`: `"key": value` members) or an array, from its opening bracket.
    private mutating func container(close: UInt8, keyed: Bool, depth: Int) -> Bool {
        guard depth <= Self.maximumDepth else { return false }
        index += 1
        if consume(close) { return true }
        while true {
            if keyed {
                skipWhitespace()
                guard current == UInt8(ascii: "\""), string(), consume(UInt8(ascii: ":")) else { return false }
            }
            guard value(depth: depth) else { return false }
            if consume(close) { return true }
            guard consume(UInt8(ascii: ",")) else { return false }
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() -> Bool {
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { return false }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard requireDigits() else { return false }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard requireDigits() else { return false }
        }
        return true
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    private mutating func requireDigits() -> Bool {
        let start = index
        skipDigits()
        return index > start
    }

    /// A string from its opening quote: escapes, no raw control characters, well-formed UTF-8.
    private mutating func string() -> Bool {
        index += 1
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard let escaped = current else { return false }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    guard bytes.count - index >= 4 else { return false }
                    for _ in 0..<4 {
                        guard DeviceToken.isHexDigit(bytes[index]) else { return false }
                        index += 1
                    }
                default:
                    return false
                }
            case 0..<0x20:
                return false
            case 0x80...:
                guard multiByteSequence(lead: byte) else { return false }
            default:
                continue
            }
        }
        return false
    }

    /// The continuation bytes of a UTF-8 sequence whose lead byte was just consumed (no overlong forms, no
    /// surrogates, nothing above U+10FFFF).
    private mutating func multiByteSequence(lead: UInt8) -> Bool {
        let continuations: Int
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: continuations = 1
        case 0xE0: continuations = 2; second = 0xA0...0xBF
        case 0xED: continuations = 2; second = 0x80...0x9F
        case 0xE1...0xEF: continuations = 2
        case 0xF0: continuations = 3; second = 0x90...0xBF
        case 0xF4: continuations = 3; second = 0x80...0x8F
        case 0xF1...0xF3: continuations = 3
        default: return false
        }
        guard bytes.count - index >= continuations, second.contains(bytes[index]) else { return false }
        for offset in 1..<continuations where !(0x80...0xBF).contains(bytes[index + offset]) { return false }
        index += continuations
        return true
    }
}
