/// Checks that a payload is one JSON object (RFC 8259: strings with valid escapes and valid UTF-8, no raw control
/// characters, the number grammar, `true`/`false`/`null`, at most ``maximumDepth`` levels), without building
/// anything: the mock only needs yes or no, once per request, with no allocation. One pass over the bytes with an
/// explicit stack of open containers (no recursion).
struct APNsMockJSONValidator {
    /// Deeper nesting is refused (Foundation's limit is 512; an APNs payload is at most 5120 bytes anyway).
    static let maximumDepth = 512

    private let bytes: UnsafePointer<UInt8>
    private let end: Int
    private var index = 0

    private init(_ bytes: UnsafePointer<UInt8>, count: Int) {
        self.bytes = bytes
        end = count
    }

    /// What the parser expects next.
    private enum Expect { case value, key, valueOrClose, keyOrClose, separatorOrClose }

    /// True when `payload` is exactly one JSON object, optionally surrounded by whitespace.
    static func isObject(_ payload: [UInt8]) -> Bool {
        payload.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            // Open containers, innermost last: true for an object, false for an array.
            return withUnsafeTemporaryAllocation(of: Bool.self, capacity: maximumDepth) { stack in
                var validator = APNsMockJSONValidator(base, count: buffer.count)
                return validator.objectDocument(stack: stack)
            }
        }
    }

    private mutating func objectDocument(stack: UnsafeMutableBufferPointer<Bool>) -> Bool {
        skipWhitespace()
        guard index < end, bytes[index] == UInt8(ascii: "{") else { return false }
        var depth = 0
        var expect = Expect.value
        while true {
            skipWhitespace()
            guard index < end else { return false }
            let byte = bytes[index]
            switch expect {
            case .key, .keyOrClose:
                if expect == .keyOrClose, byte == UInt8(ascii: "}") {
                    index += 1
                    depth -= 1
                    expect = .separatorOrClose
                    break
                }
                guard byte == UInt8(ascii: "\""), string() else { return false }
                skipWhitespace()
                guard index < end, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                expect = .value
            case .value, .valueOrClose:
                if expect == .valueOrClose, byte == UInt8(ascii: "]") {
                    index += 1
                    depth -= 1
                    expect = .separatorOrClose
                    break
                }
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard depth < Self.maximumDepth else { return false }
                    let isObject = byte == UInt8(ascii: "{")
                    stack[depth] = isObject
                    depth += 1
                    index += 1
                    expect = isObject ? .keyOrClose : .valueOrClose
                case UInt8(ascii: "\""):
                    guard string() else { return false }
                    expect = .separatorOrClose
                case UInt8(ascii: "t"):
                    guard literal("true") else { return false }
                    expect = .separatorOrClose
                case UInt8(ascii: "f"):
                    guard literal("false") else { return false }
                    expect = .separatorOrClose
                case UInt8(ascii: "n"):
                    guard literal("null") else { return false }
                    expect = .separatorOrClose
                default:
                    guard number() else { return false }
                    expect = .separatorOrClose
                }
            case .separatorOrClose:
                let inObject = stack[depth - 1]
                switch byte {
                case UInt8(ascii: ","):
                    index += 1
                    expect = inObject ? .key : .value
                case UInt8(ascii: "}") where inObject, UInt8(ascii: "]") where !inObject:
                    index += 1
                    depth -= 1
                default:
                    return false
                }
            }
            if depth == 0 && expect == .separatorOrClose {
                // The top-level object closed: only whitespace may follow.
                skipWhitespace()
                return index == end
            }
        }
    }

    private mutating func skipWhitespace() {
        while index < end {
            let byte = bytes[index]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index += 1
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard end - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() -> Bool {
        if index < end, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < end, isDigit(bytes[index]) else { return false }
        let first = bytes[index]
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard requireDigits() else { return false }
        }
        if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard requireDigits() else { return false }
        }
        return true
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < end, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func requireDigits() -> Bool {
        let start = index
        skipDigits()
        return index > start
    }

    /// The top bit set in (at least) the lowest byte of `word` that is a control character, non-ASCII, `"` or `\`;
    /// zero when there is none. Bytes above the lowest such byte may be flagged falsely (borrows); below it, never.
    private static func specialBytes(_ word: UInt64) -> UInt64 {
        func spread(_ byte: UInt8) -> UInt64 { UInt64(byte) &* 0x0101_0101_0101_0101 }
        func zeroBytes(_ value: UInt64) -> UInt64 { (value &- spread(0x01)) & ~value & spread(0x80) }
        let control = (word &- spread(0x20)) & ~word & spread(0x80)
        let nonASCII = word & spread(0x80)
        return control | nonASCII | zeroBytes(word ^ spread(UInt8(ascii: "\""))) | zeroBytes(word ^ spread(UInt8(ascii: "\\")))
    }

    /// A string from its opening quote: escapes, no raw control characters, well-formed UTF-8.
    private mutating func string() -> Bool {
        var position = index + 1
        defer { index = position }
        while true {
            // Plain printable ASCII (almost every byte of a payload's strings): eight bytes at a time, then one by one.
            while end - position >= 8 {
                let word = UnsafeRawPointer(bytes + position).loadUnaligned(as: UInt64.self)
                let special = Self.specialBytes(UInt64(littleEndian: word))
                if special != 0 {
                    position += special.trailingZeroBitCount / 8
                    break
                }
                position += 8
            }
            while position < end {
                let byte = bytes[position]
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { break }
                position &+= 1
            }
            guard position < end else { return false }
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard position < end else { return false }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    guard end - position >= 4 else { return false }
                    for _ in 0..<4 {
                        guard APNsMockBytes.hexValue(bytes[position]) != nil else { return false }
                        position += 1
                    }
                default:
                    return false
                }
            case 0..<0x20:
                return false
            default:
                // 0x80 and above: the continuation bytes of a UTF-8 sequence (no overlong forms, no surrogates,
                // nothing above U+10FFFF).
                let continuations: Int
                var second: ClosedRange<UInt8> = 0x80...0xBF
                switch byte {
                case 0xC2...0xDF: continuations = 1
                case 0xE0: continuations = 2; second = 0xA0...0xBF
                case 0xED: continuations = 2; second = 0x80...0x9F
                case 0xE1...0xEF: continuations = 2
                case 0xF0: continuations = 3; second = 0x90...0xBF
                case 0xF4: continuations = 3; second = 0x80...0x8F
                case 0xF1...0xF3: continuations = 3
                default: return false
                }
                guard end - position >= continuations, second.contains(bytes[position]) else { return false }
                for offset in 1..<continuations where !(0x80...0xBF).contains(bytes[position + offset]) { return false }
                position += continuations
            }
        }
    }
}
