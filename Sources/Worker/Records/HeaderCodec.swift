import Kafka

/// Header names the worker reads and writes (docs/integration.md, "Records callpush writes"), and their
/// ASCII-decimal encoding.
enum HeaderCodec {
    /// Delivery attempt number; 1 = first try on the main topic.
    static let attempt = "x-attempt"
    /// Absolute due time of a retry record, epoch ms.
    static let notBefore = "x-not-before"
    /// After this time (epoch ms) the push is useless → expired.
    static let deadline = "x-deadline"
    /// Where the event first came from; set once, never overwritten.
    static let originalTopic = "x-original-topic"
    static let originalPartition = "x-original-partition"
    static let originalOffset = "x-original-offset"
    static let originalTimestamp = "x-original-timestamp"
    /// Bounded error class of the last failure (``ErrorClass``).
    static let errorClass = "x-error-class"
    /// HTTP `:status` of the last failure, when there was a response.
    static let errorStatus = "x-error-status"
    /// APNs `reason` (or transport reason, or decoding detail) of the last failure.
    static let errorReason = "x-error-reason"
    /// When the first failure happened, epoch ms; set once.
    static let firstFailedAt = "x-first-failed-at"
    /// Why the event was dead-lettered.
    static let dlqReason = "x-dlq-reason"
    /// The whole size of a dead-lettered value that was cut to fit (its first bytes are the record's value).
    static let dlqValueBytes = "x-dlq-value-bytes"
    /// How many of the consumed record's own headers were not carried along (over the carried-header limit).
    static let headersDropped = "x-headers-dropped"

    /// Every header the worker manages; other headers of a record are carried along unchanged.
    static let managed: Set<String> = [
        attempt, notBefore, deadline, originalTopic, originalPartition, originalOffset, originalTimestamp,
        errorClass, errorStatus, errorReason, firstFailedAt, dlqReason, dlqValueBytes, headersDropped,
    ]

    /// ASCII decimal, `-` for negatives.
    static func encode(_ value: Int64) -> [UInt8] { Array(String(value).utf8) }

    /// Strict ASCII decimal: an optional `-`, 1–19 digits, nothing else (no spaces, no `+`), fitting in Int64.
    static func decode(_ bytes: [UInt8]) -> Int64? {
        var index = 0
        var negative = false
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        let digits = bytes.count - index
        guard digits >= 1, digits <= 19 else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (multiplied, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = multiplied.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = added
            index += 1
        }
        return negative ? -value : value
    }

    /// The last header `name` in `headers` as an integer; nil when absent or malformed.
    static func integer(_ name: String, in headers: [KafkaHeader]) -> Int64? {
        headers.last(named: name).flatMap { decode($0.value) }
    }
}
