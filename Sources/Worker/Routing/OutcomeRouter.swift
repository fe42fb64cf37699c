import APNs
import Kafka
import Telemetry

/// Turns what happened to one consumed event into its single ``Outcome`` and the records to produce.
///
/// Rules: docs/call-handling.md, section "Outcome routing (OutcomeRouter)".
///
/// Pure and thread-safe (an immutable value): no clock, no I/O; `now` is an input.
struct OutcomeRouter: Sendable {
    typealias Configuration = RoutingConfiguration

    /// The routing of one event.
    struct Decision: Sendable, Hashable {
        var outcome: Outcome
        /// Records to produce before the event's offset may be stored.
        var records: [KafkaProducerRecord]
        /// A bounded label for metrics/logs: the DLQ reason, the error class of a retry, the drop reason.
        var reason: String?
        /// The retry tier's topic one of ``records`` goes to, for a retry.
        var retryTier: String? = nil
    }

    let configuration: Configuration

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Dead-letter reasons written as `x-dlq-reason` besides decoding and mapping codes.
    enum DeadLetterReason {
        static let retriesExhausted = "retries_exhausted"
        static let apnsRejected = "apns_rejected"
        static let apnsCredentials = "apns_credentials"
        static let unknownApp = "unknown_app"
    }

    /// Routes an event that cannot become a push: undecodable (`event` nil) or unmappable. It is dead-lettered with
    /// `reason` (its error's code) and `detail` (the error's message).
    func route(record: KafkaMessage, event: CallEvent?, rejected reason: String, detail: String) -> Decision {
        let context = RetryContext(record: record, event: event, policy: configuration.retry)
        return withReceipt(deadLetter(record, context, reason: reason, status: nil, detail: detail), record: record,
                           event: event)
    }

    /// Routes an event dropped unsent: the ``CallTracker`` said `expired` or `cancelled`; `reason` says why (see
    /// ``CancelReason``), default the outcome's name.
    func route(record: KafkaMessage, event: CallEvent?, dropped outcome: Outcome, reason: String? = nil) -> Decision {
        withReceipt(Decision(outcome: outcome, records: [], reason: reason ?? outcome.rawValue), record: record,
                    event: event)
    }

    /// Routes APNs' answer to the event's push (or a transport failure as a result).
    /// - Parameters:
    ///   - record: the consumed record (its key, value and headers are carried to retry and DLQ records).
    ///   - topic: the `apns-topic` the request used.
    ///   - now: epoch ms.
    ///   - callEnded: ``CallTracker/hasEnded(_:)`` for the event's call (turns a retry of an incoming into
    ///     `cancelled`).
    ///   - latencyMilliseconds: for the receipt (`created_at` → answer), if known.
    func route(
        record: KafkaMessage,
        event: CallEvent?,
        answer: APNsResult,
        topic: String,
        now: Int64,
        callEnded: Bool = false,
        latencyMilliseconds: Int64? = nil
    ) -> Decision {
        let decision = answer.disposition == .delivered
            ? Decision(outcome: .delivered, records: [], reason: nil)
            : route(answer, topic: topic, record: record, event: event,
                    context: RetryContext(record: record, event: event, policy: configuration.retry), now: now,
                    callEnded: callEnded)
        return withReceipt(decision, record: record, event: event, result: answer,
                           latencyMilliseconds: latencyMilliseconds)
    }

    /// `decision` with the event's receipt added when receipts are on.
    private func withReceipt(
        _ decision: Decision, record: KafkaMessage, event: CallEvent?, result: APNsResult? = nil,
        latencyMilliseconds: Int64? = nil
    ) -> Decision {
        guard configuration.emitReceipts else { return decision }
        var decision = decision
        let receipt = receipt(record: record, event: event, outcome: decision.outcome, result: result,
                              reason: decision.reason, latencyMilliseconds: latencyMilliseconds)
        // The usual decision has no other record: an array made for one costs less than growing an empty one.
        if decision.records.isEmpty { decision.records = [receipt] } else { decision.records.append(receipt) }
        return decision
    }

    private func route(
        _ result: APNsResult,
        topic: String,
        record: KafkaMessage,
        event: CallEvent?,
        context: RetryContext,
        now: Int64,
        callEnded: Bool
    ) -> Decision {
        switch result.disposition {
        case .delivered:
            return Decision(outcome: .delivered, records: [], reason: nil)
        case .tokenInvalid:
            return Decision(
                outcome: .invalidated,
                records: [invalidation(result, topic: topic, record: record, event: event)],
                reason: result.reason.map { APNsReason(rawValue: $0).metricLabel } ?? "token_invalid"
            )
        case .permanent:
            let reason = result.apnsReason == .unknownApp ? DeadLetterReason.unknownApp : DeadLetterReason.apnsRejected
            return deadLetter(record, context, reason: reason, status: result.status, detail: result.reason)
        case .fixCredentials:
            return deadLetter(record, context, reason: DeadLetterReason.apnsCredentials, status: result.status, detail: result.reason)
        case .retryLater:
            if callEnded && event?.type == .incoming {
                return Decision(outcome: .cancelled, records: [], reason: CancelReason.retryAfterStop)
            }
            if context.isPastDeadline(now: now) {
                return Decision(outcome: .expired, records: [], reason: "deadline")
            }
            guard let tierIndex = configuration.retry.tierIndex(afterFailedAttempt: context.attempt) else {
                return deadLetter(record, context, reason: DeadLetterReason.retriesExhausted, status: result.status, detail: result.reason)
            }
            let tier = configuration.retry.tiers[tierIndex]
            let notBefore = now.saturatingAdd(tier.delayMilliseconds)
            if let deadline = context.deadlineMilliseconds, notBefore >= deadline {
                return Decision(outcome: .expired, records: [], reason: "deadline")
            }
            let errorClass = ErrorClass(result)
            var headers = carriedHeaders(record)
            headers.append(KafkaHeader(name: HeaderCodec.attempt, integer: Int64(context.attempt + 1)))
            headers.append(KafkaHeader(name: HeaderCodec.notBefore, integer: notBefore))
            if let deadline = context.deadlineMilliseconds {
                headers.append(KafkaHeader(name: HeaderCodec.deadline, integer: deadline))
            }
            headers += context.originalHeaders
            headers.append(KafkaHeader(name: HeaderCodec.firstFailedAt, integer: context.firstFailedAtMilliseconds ?? now))
            headers.append(KafkaHeader(name: HeaderCodec.errorClass, string: errorClass.rawValue))
            if let status = result.status { headers.append(KafkaHeader(name: HeaderCodec.errorStatus, integer: Int64(status))) }
            if let reason = result.reason { headers.append(errorReason(reason)) }
            // The same partition number as the record it came from, never a hash of the key: the call's stop event
            // reaches this partition number of the calls topic, whatever partitioner upstream used.
            let retry = KafkaProducerRecord(
                topic: tier.topic, partition: record.partition, key: record.key, value: record.value, headers: headers)
            return Decision(outcome: .retried, records: [retry], reason: errorClass.rawValue, retryTier: tier.topic)
        }
    }

    // MARK: - Records

    /// Headers of `record` the worker does not manage (tracing etc.), carried along unchanged up to
    /// ``Configuration/carriedHeaderLimit`` bytes; the rest are counted in `x-headers-dropped`.
    private func carriedHeaders(_ record: KafkaMessage) -> [KafkaHeader] {
        guard !record.headers.isEmpty else { return [] }
        var carried: [KafkaHeader] = []
        var bytes = 0, dropped = 0
        for header in record.headers where !HeaderCodec.managed.contains(header.name) {
            bytes += header.name.utf8.count + header.value.count
            if bytes <= configuration.carriedHeaderLimit { carried.append(header) } else { dropped += 1 }
        }
        if dropped > 0 { carried.append(KafkaHeader(name: HeaderCodec.headersDropped, integer: Int64(dropped))) }
        return carried
    }

    /// An error text as a header, cut to ``Configuration/errorReasonLimit`` bytes (at a character boundary).
    private func errorReason(_ text: String) -> KafkaHeader {
        let bytes = Array(text.utf8)
        guard bytes.count > configuration.errorReasonLimit else { return KafkaHeader(name: HeaderCodec.errorReason, value: bytes) }
        var end = configuration.errorReasonLimit
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }  // not inside a multi-byte character
        return KafkaHeader(name: HeaderCodec.errorReason, value: Array(bytes[..<end]))
    }

    private func deadLetter(
        _ record: KafkaMessage,
        _ context: RetryContext,
        reason: String,
        status: Int?,
        detail: String?
    ) -> Decision {
        var headers = carriedHeaders(record)
        headers.append(KafkaHeader(name: HeaderCodec.dlqReason, string: reason))
        if let status { headers.append(KafkaHeader(name: HeaderCodec.errorStatus, integer: Int64(status))) }
        if let detail { headers.append(errorReason(detail)) }
        headers.append(KafkaHeader(name: HeaderCodec.attempt, integer: Int64(context.attempt)))
        headers += context.originalHeaders
        if let first = context.firstFailedAtMilliseconds {
            headers.append(KafkaHeader(name: HeaderCodec.firstFailedAt, integer: first))
        }
        var value = record.value
        if value.count > configuration.deadLetterValueLimit {
            headers.append(KafkaHeader(name: HeaderCodec.dlqValueBytes, integer: Int64(value.count)))
            value = Array(value.prefix(configuration.deadLetterValueLimit))
        }
        let dlq = KafkaProducerRecord(topic: configuration.deadLetterTopic, key: record.key, value: value, headers: headers)
        return Decision(outcome: .deadLettered, records: [dlq], reason: reason)
    }

    /// `{"token","topic","environment","reason","apns_timestamp","event_id"}`, key = token.
    private func invalidation(_ result: APNsResult, topic: String, record: KafkaMessage, event: CallEvent?) -> KafkaProducerRecord {
        let token = event?.deviceToken.hex ?? ""
        let value = JSONWriter.bytes(capacity: 512) { writer in
            writer.appendLiteral(#"{"token":"#)
            writer.appendString(token)
            writer.appendLiteral(#","topic":"#)
            writer.appendString(topic)
            writer.appendLiteral(#","environment":"#)
            writer.appendString(event?.environment.rawValue ?? "")
            writer.appendLiteral(#","reason":"#)
            writer.appendStringOrNull(result.reason)
            writer.appendLiteral(#","apns_timestamp":"#)
            writer.appendIntOrNull(result.timestampMilliseconds)
            writer.appendLiteral(#","event_id":"#)
            Self.append(\.eventID, of: event, to: &writer)
            writer.appendByte(UInt8(ascii: "}"))
        }
        return KafkaProducerRecord(topic: configuration.invalidatedTokensTopic, key: Array(token.utf8), value: value)
    }

    /// The event's text field that `field` picks as a JSON string, or `null` when the record held no event.
    private static func append(
        _ field: (CallEvent.Spans) -> JSONSpan, of event: CallEvent?, to writer: inout JSONWriter
    ) {
        if let event { event.write(field(event.spans), to: &writer) } else { writer.appendLiteral("null") }
    }

    /// `{event_id, call_id, outcome, apns_id, status, reason, latency_ms}`, key = the record's key.
    private func receipt(
        record: KafkaMessage,
        event: CallEvent?,
        outcome: Outcome,
        result: APNsResult?,
        reason: String?,
        latencyMilliseconds: Int64?
    ) -> KafkaProducerRecord {
        let value = JSONWriter.bytes(capacity: 512) { writer in
            writer.appendLiteral(#"{"event_id":"#)
            Self.append(\.eventID, of: event, to: &writer)
            writer.appendLiteral(#","call_id":"#)
            Self.append(\.callID, of: event, to: &writer)
            writer.appendLiteral(#","outcome":"#)
            writer.appendString(outcome.rawValue)
            writer.appendLiteral(#","apns_id":"#)
            if let id = result?.id {
                writer.appendQuoted(count: APNsID.textCount) { id.write(to: $0) }
            } else {
                writer.appendLiteral("null")
            }
            writer.appendLiteral(#","status":"#)
            writer.appendIntOrNull(result?.status.map(Int64.init))
            writer.appendLiteral(#","reason":"#)
            writer.appendStringOrNull(result?.reason ?? reason)
            writer.appendLiteral(#","latency_ms":"#)
            writer.appendIntOrNull(latencyMilliseconds)
            writer.appendByte(UInt8(ascii: "}"))
        }
        return KafkaProducerRecord(topic: configuration.outcomesTopic, key: record.key, value: value)
    }
}
