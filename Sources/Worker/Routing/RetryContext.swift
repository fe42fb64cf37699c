import Kafka
import Telemetry

/// What the worker knows about a consumed record's history, read from its headers with safe fallbacks.
///
/// Header handling (bad headers never crash and never loop forever):
/// - `x-attempt` missing or malformed: 1 on a non-retry topic; on a retry tier *i*, *i + 2* (the least attempt
///   number that can be in that tier), so a record with broken headers still moves towards the DLQ.
/// - `x-deadline` missing or malformed: computed from the event (ring deadline for incoming, `created_at` +
///   ``RetryPolicy/stopEventRetryWindow`` otherwise), or none when the event did not decode.
/// - `x-original-*` missing or malformed: this record's own coordinates (each field on its own).
/// - `x-first-failed-at` missing or malformed: none.
struct RetryContext: Sendable, Hashable {
    var attempt: Int
    var deadlineMilliseconds: Int64?
    var originalTopic: String
    var originalPartition: Int32
    var originalOffset: Int64
    var originalTimestampMilliseconds: Int64
    var firstFailedAtMilliseconds: Int64?

    init(record: KafkaMessage, event: CallEvent?, policy: RetryPolicy) {
        let headers = record.headers
        let tier = policy.tierIndex(forTopic: record.topic)
        if let attempt = HeaderCodec.integer(HeaderCodec.attempt, in: headers), attempt >= 1, attempt <= 1_000 {
            self.attempt = Int(attempt)
        } else {
            self.attempt = tier.map { $0 + 2 } ?? 1
        }
        if let deadline = HeaderCodec.integer(HeaderCodec.deadline, in: headers) {
            deadlineMilliseconds = deadline
        } else if let event {
            deadlineMilliseconds = Self.deadline(of: event, policy: policy)
        } else {
            deadlineMilliseconds = nil
        }
        let topicHeader = headers.last(named: HeaderCodec.originalTopic).flatMap { header in
            String(validating: header.value, as: UTF8.self).flatMap { $0.isEmpty ? nil : $0 }
        }
        originalTopic = topicHeader ?? record.topic
        originalPartition =
            HeaderCodec.integer(HeaderCodec.originalPartition, in: headers).flatMap { Int32(exactly: $0) }
            ?? record.partition
        originalOffset = HeaderCodec.integer(HeaderCodec.originalOffset, in: headers) ?? record.offset
        originalTimestampMilliseconds =
            HeaderCodec.integer(HeaderCodec.originalTimestamp, in: headers) ?? record.timestampMilliseconds ?? 0
        firstFailedAtMilliseconds = HeaderCodec.integer(HeaderCodec.firstFailedAt, in: headers)
    }

    /// After this the event is useless: the ring deadline for incoming, `created_at` + the stop-event window else.
    static func deadline(of event: CallEvent, policy: RetryPolicy) -> Int64 {
        event.type == .incoming
            ? event.ringDeadlineMilliseconds
            : event.createdAtMilliseconds.saturatingAdd(policy.stopEventRetryWindow.inMilliseconds)
    }

    /// Whether the event is useless at `now`.
    func isPastDeadline(now: Int64) -> Bool {
        guard let deadlineMilliseconds else { return false }
        return now >= deadlineMilliseconds
    }

    /// The `x-original-*` headers (carried unchanged from the first hop).
    var originalHeaders: [KafkaHeader] {
        [
            KafkaHeader(name: HeaderCodec.originalTopic, string: originalTopic),
            KafkaHeader(name: HeaderCodec.originalPartition, integer: Int64(originalPartition)),
            KafkaHeader(name: HeaderCodec.originalOffset, integer: originalOffset),
            KafkaHeader(name: HeaderCodec.originalTimestamp, integer: originalTimestampMilliseconds),
        ]
    }
}
