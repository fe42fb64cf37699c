/// Writes the generator's call events as JSON bytes (design.md's event schema) by appending bytes, with no
/// Foundation formatting: the generator runs on the cores of the pipeline it loads, and `String(format:)`, `UUID()`
/// (a `getrandom` call each) and string interpolation made it about a fifth of the `latency` bench area's CPU at
/// half the maximum rate.
struct CallEventRenderer: Sendable {
    /// One call's fields shared by its incoming event and its hang-up.
    struct Call: Sendable {
        var number: Int
        /// An index into ``CallEventRenderer/deadTokens``, or nil for the call's own live token.
        var deadToken: Int?
        var voip: Bool
        var sandbox: Bool
    }

    enum Kind: Sendable {
        case incoming
        case hangUp
    }

    /// The tokens the mock APNs should answer 410 for: "dead" and 60 hex digits of 0…15.
    static let deadTokens: [[UInt8]] = (0..<16).map { index in
        var token = Array("dead".utf8)
        appendHex(UInt64(index), digits: 60, to: &token)
        return token
    }

    private let topic: [UInt8]
    /// Part of every call id, so that calls of two runs on one cluster (a warm-up and the measured window, repeated
    /// bursts) never share an id: a call that hung up in the first run would be cancelled, not pushed, in the next.
    private let runTag: UInt64

    init(topic: String, runTag: UInt64) {
        self.topic = Array(topic.utf8)
        self.runTag = runTag
    }

    /// `call-<run tag: 6 hex digits>-<number>`.
    func callID(_ number: Int) -> [UInt8] {
        var bytes = Array("call-".utf8)
        bytes.reserveCapacity(32)
        Self.appendHex(runTag & 0xFF_FFFF, digits: 6, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        Self.appendDecimal(UInt64(number), to: &bytes)
        return bytes
    }

    /// The event's JSON: `eventID` is 128 random bits, written as a version-4 UUID.
    func render(_ kind: Kind, _ call: Call, callID: [UInt8], eventID: (UInt64, UInt64), createdAt: Int64) -> [UInt8] {
        var json: [UInt8] = []
        json.reserveCapacity(400)
        json.append(contentsOf: #"{"event_id":""#.utf8)
        Self.appendUUID(eventID, to: &json)
        json.append(contentsOf: kind == .incoming ? #"","type":"incoming","call_id":""#.utf8
            : #"","type":"hangup","call_id":""#.utf8)
        json.append(contentsOf: callID)
        json.append(contentsOf: #"","device_token":""#.utf8)
        if let dead = call.deadToken {
            json.append(contentsOf: Self.deadTokens[dead])
        } else {
            // 56 zeros and 8 hex digits: the tokens `String(format: "%064x", number &* 2_654_435_761)` made.
            Self.appendHex(UInt64(UInt32(truncatingIfNeeded: call.number &* 2_654_435_761)), digits: 64, to: &json)
        }
        json.append(contentsOf: call.voip ? #"","push":"voip","topic":""#.utf8 : #"","push":"alert","topic":""#.utf8)
        json.append(contentsOf: topic)
        json.append(contentsOf: call.sandbox ? #"","environment":"sandbox","created_at":"#.utf8
            : #"","environment":"production","created_at":"#.utf8)
        Self.appendDecimal(UInt64(max(0, createdAt)), to: &json)
        json.append(contentsOf: #","ring_timeout_s":30,"caller":{"name":"Caller "#.utf8)
        Self.appendDecimal(UInt64(call.number % 97), to: &json)
        json.append(contentsOf: #"","id":"u-"#.utf8)
        Self.appendDecimal(UInt64(call.number % 1000), to: &json)
        json.append(contentsOf: #""}}"#.utf8)
        return json
    }

    /// A truncated event (not JSON): the consumer must dead-letter it.
    func malformed(_ number: Int) -> [UInt8] {
        var json = Array(#"{"event_id":"broken-"#.utf8)
        Self.appendDecimal(UInt64(number), to: &json)
        json.append(contentsOf: #"","type":"incoming","call_id":"#.utf8)
        return json
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `value`'s low `digits` × 4 bits as lowercase hex, zero-padded to `digits`.
    static func appendHex(_ value: UInt64, digits: Int, to bytes: inout [UInt8]) {
        for position in stride(from: digits - 1, through: 0, by: -1) {
            bytes.append(position >= 16 ? UInt8(ascii: "0") : hexDigits[Int((value >> (UInt64(position) * 4)) & 0xF)])
        }
    }

    static func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
        var digits: (UInt64, Int) = (1, 1)
        while digits.0 <= value / 10 { digits = (digits.0 * 10, digits.1 + 1) }
        var rest = value
        var unit = digits.0
        for _ in 0..<digits.1 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / unit))
            rest %= unit
            unit /= 10
        }
    }

    /// 8-4-4-4-12 lowercase hex digits, with the version (4) and variant (10) bits of a random UUID.
    static func appendUUID(_ bits: (UInt64, UInt64), to bytes: inout [UInt8]) {
        let high = bits.0 & 0xFFFF_FFFF_FFFF_0FFF | 0x4000
        let low = bits.1 & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        appendHex(high >> 32, digits: 8, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendHex(high >> 16, digits: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendHex(high, digits: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendHex(low >> 48, digits: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendHex(low, digits: 12, to: &bytes)
    }
}
