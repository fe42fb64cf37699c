import APNsMock
import Worker

/// Writes the generator's call events as JSON bytes (docs/integration.md, "Call event") with the worker's
/// `JSONWriter`, no Foundation formatting: the generator runs on the cores of the pipeline it loads, and
/// `String(format:)`, `UUID()` (a `getrandom` call each) and string interpolation took CPU from the worker it
/// measures (docs/performance.md, "Latency").
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
        Array(("dead" + String(repeating: "0", count: 59)).utf8) + [JSONWriter.hexDigit(UInt8(index))]
    }

    private let topic: [UInt8]
    /// Part of every call id, so that calls of two runs on one cluster (a warm-up and the measured window, repeated
    /// bursts) never share an id: a call that hung up in the first run would be cancelled, not pushed, in the next.
    private let runTag: UInt32

    init(topic: String, runTag: UInt32) {
        self.topic = Array(topic.utf8)
        self.runTag = runTag
    }

    /// `call-<run tag: 6 hex digits>-<number>`.
    func callID(_ number: Int) -> [UInt8] {
        var id = JSONWriter(capacity: 32)
        id.appendLiteral("call-")
        Self.appendHex(runTag, digits: 6, to: &id)
        id.appendByte(UInt8(ascii: "-"))
        id.appendInt(Int64(number))
        return id.finish()
    }

    /// The event's JSON.
    func render(_ kind: Kind, _ call: Call, callID: [UInt8], eventID: APNsMockUUID, createdAt: Int64) -> [UInt8] {
        var json = JSONWriter(capacity: 400)
        json.appendLiteral(#"{"event_id":""#)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: APNsMockUUID.textLength) { text in
            eventID.write(to: text)
            json.append(UnsafeBufferPointer(text))
        }
        if kind == .incoming {
            json.appendLiteral(#"","type":"incoming","call_id":""#)
        } else {
            json.appendLiteral(#"","type":"hangup","call_id":""#)
        }
        json.appendRaw(callID)
        json.appendLiteral(#"","device_token":""#)
        if let dead = call.deadToken {
            json.appendRaw(Self.deadTokens[dead])
        } else {
            // 56 zeros and 8 hex digits: the tokens `String(format: "%064x", number &* 2_654_435_761)` made.
            json.appendLiteral("00000000000000000000000000000000000000000000000000000000")
            Self.appendHex(UInt32(truncatingIfNeeded: call.number &* 2_654_435_761), digits: 8, to: &json)
        }
        json.appendLiteral(call.voip ? #"","push":"voip","topic":""# : #"","push":"alert","topic":""#)
        json.appendRaw(topic)
        json.appendLiteral(call.sandbox ? #"","environment":"sandbox","created_at":"#
            : #"","environment":"production","created_at":"#)
        json.appendInt(createdAt)
        json.appendLiteral(#","ring_timeout_s":30,"caller":{"name":"Caller "#)
        json.appendInt(Int64(call.number % 97))
        json.appendLiteral(#"","id":"u-"#)
        json.appendInt(Int64(call.number % 1000))
        json.appendLiteral(#""}}"#)
        return json.finish()
    }

    /// A truncated event (not JSON): the consumer must dead-letter it.
    func malformed(_ number: Int) -> [UInt8] {
        var json = JSONWriter(capacity: 64)
        json.appendLiteral(#"{"event_id":"broken-"#)
        json.appendInt(Int64(number))
        json.appendLiteral(#"","type":"incoming","call_id":"#)
        return json.finish()
    }

    /// `value`'s low `digits` × 4 bits as lowercase hex, zero-padded.
    private static func appendHex(_ value: UInt32, digits: Int, to json: inout JSONWriter) {
        for position in stride(from: digits - 1, through: 0, by: -1) {
            json.appendByte(JSONWriter.hexDigit(UInt8(truncatingIfNeeded: value >> (UInt32(position) * 4)) & 0xF))
        }
    }
}
