import Kafka
@testable import APNs
import Foundation
import Testing
@testable import Worker

@Suite struct OutcomeRouterTests {
    let router = OutcomeRouter()
    let event = Fixtures.event()  // created 1_764_489_600_123, deadline +30 s
    var now: Int64 { event.createdAtMilliseconds + 1_000 }

    func record(topic: String = "calls", headers: [KafkaHeader] = [], event: CallEvent? = nil) -> KafkaMessage {
        KafkaMessage(
            topic: topic, partition: 3, offset: 42, key: Array("c-42".utf8),
            value: Array(Fixtures.eventJSON().utf8), headers: headers + [KafkaHeader(name: "traceparent", string: "t1")],
            timestampMilliseconds: 1_764_489_600_200
        )
    }

    func header(_ record: KafkaProducerRecord, _ name: String) -> String? { record.headers.last(named: name)?.text }

    func result(_ disposition: APNsDisposition, _ status: Int?, _ reason: String?, timestamp: Int64? = nil) -> APNsResult {
        APNsResult(disposition: disposition, status: status, reason: reason, id: APNsID(Fixtures.uuid),
                   timestampMilliseconds: timestamp)
    }

    @Test func delivered() {
        let decision = router.route(record: record(), event: event, answer: result(.delivered, 200, nil), topic: "com.example.app", now: now)
        #expect(decision.outcome == .delivered)
        #expect(decision.records.isEmpty)
    }

    @Test func tokenInvalidProducesInvalidation() throws {
        let decision = router.route(
            record: record(), event: event,
            answer: result(.tokenInvalid, 410, "Unregistered", timestamp: 1_700_000_000_000), topic: "com.example.app",
            now: now
        )
        #expect(decision.outcome == .invalidated)
        let produced = try #require(decision.records.first)
        #expect(decision.records.count == 1)
        #expect(produced.topic == "apns.tokens.invalidated")
        #expect(produced.key == Array(Fixtures.token.utf8))
        let expected: NSDictionary = [
            "token": Fixtures.token, "topic": "com.example.app", "environment": "production", "reason": "Unregistered",
            "apns_timestamp": 1_700_000_000_000, "event_id": Fixtures.uuid,
        ]
        #expect(Fixtures.object(produced.value) == expected)
        let noTimestamp = router.route(
            record: record(), event: event, answer: result(.tokenInvalid, 400, "BadDeviceToken"), topic: "t", now: now
        )
        #expect(Fixtures.object(noTimestamp.records[0].value)?["apns_timestamp"] is NSNull)
    }

    @Test(arguments: [
        (APNsDisposition.permanent, 400, "BadTopic", "apns_rejected"),
        (APNsDisposition.fixCredentials, 403, "InvalidProviderToken", "apns_credentials"),
    ])
    func deadLetters(disposition: APNsDisposition, status: Int, reason: String, dlqReason: String) throws {
        let decision = router.route(record: record(), event: event, answer: result(disposition, status, reason), topic: "t", now: now)
        #expect(decision.outcome == .deadLettered)
        let dlq = try #require(decision.records.first)
        #expect(dlq.topic == "calls.dlq")
        #expect(dlq.key == Array("c-42".utf8))
        #expect(dlq.value == record().value)
        #expect(header(dlq, "x-dlq-reason") == dlqReason)
        #expect(header(dlq, "x-error-status") == String(status))
        #expect(header(dlq, "x-error-reason") == reason)
        #expect(header(dlq, "x-attempt") == "1")
        #expect(header(dlq, "x-original-topic") == "calls")
        #expect(header(dlq, "x-original-partition") == "3")
        #expect(header(dlq, "x-original-offset") == "42")
        #expect(header(dlq, "x-original-timestamp") == "1764489600200")
        #expect(header(dlq, "traceparent") == "t1")
    }

    @Test func decodingAndMappingFailuresAreDeadLettered() throws {
        let missing = EventDecodingError(.missingField("call_id"), "call_id is required")
        let decoding = router.route(record: record(), event: nil, rejected: missing.code.rawValue, detail: missing.message)
        #expect(decoding.outcome == .deadLettered)
        #expect(header(decoding.records[0], "x-dlq-reason") == "missing_field:call_id")
        #expect(decoding.reason == "missing_field:call_id")
        let tooLarge = PushMappingError(.payloadTooLarge, "too big")
        let mapping = router.route(record: record(), event: event, rejected: tooLarge.code.rawValue, detail: tooLarge.message)
        #expect(header(mapping.records[0], "x-dlq-reason") == "payload_too_large")
    }

    @Test func droppedOutcomesProduceNothing() {
        for outcome in [Outcome.expired, .cancelled] {
            let decision = router.route(record: record(), event: event, dropped: outcome)
            #expect(decision.outcome == outcome)
            #expect(decision.records.isEmpty)
        }
    }

    /// retryLater × attempt/tier × deadline.
    @Test(arguments: [
        // (attempt header, now offset from created_at, expected outcome, expected tier topic, expected next attempt)
        (nil as Int?, 1_000 as Int64, Outcome.retried, "calls.retry.5s" as String?, 2 as Int?),
        (2, 1_000, .expired, nil, nil),  // the 30 s tier would be due after the 30 s ring deadline
        (3, 1_000, .expired, nil, nil),  // the 2 min tier would be due after the 30 s ring deadline
        (1, 26_000, .expired, nil, nil),  // 26 s + 5 s ≥ 30 s
        (1, 30_000, .expired, nil, nil),  // already past the deadline
        (4, 1_000, .deadLettered, nil, nil),  // attempts used up
    ])
    func retryLaterIncoming(attempt: Int?, offset: Int64, outcome: Outcome, tier: String?, next: Int?) throws {
        var headers: [KafkaHeader] = []
        if let attempt { headers.append(KafkaHeader(name: "x-attempt", integer: Int64(attempt))) }
        let now = event.createdAtMilliseconds + offset
        let decision = router.route(
            record: record(headers: headers), event: event,
            answer: result(.retryLater, 503, "ServiceUnavailable"), topic: "t", now: now
        )
        #expect(decision.outcome == outcome)
        if outcome == .deadLettered {
            #expect(header(decision.records[0], "x-dlq-reason") == "retries_exhausted")
            #expect(header(decision.records[0], "x-attempt") == "4")
        }
        guard let tier, let next else { return }
        let retry = try #require(decision.records.first)
        #expect(retry.topic == tier)
        #expect(retry.partition == 3, "a retry stays on the partition number of the record it came from")
        #expect(retry.key == Array("c-42".utf8))
        #expect(retry.value == record().value)
        #expect(header(retry, "x-attempt") == String(next))
        let delay: Int64 = tier == "calls.retry.5s" ? 5_000 : 30_000
        #expect(header(retry, "x-not-before") == String(now + delay))
        #expect(header(retry, "x-deadline") == String(event.ringDeadlineMilliseconds))
        #expect(header(retry, "x-error-class") == "apns_5xx")
        #expect(header(retry, "x-error-status") == "503")
        #expect(header(retry, "x-error-reason") == "ServiceUnavailable")
        #expect(header(retry, "x-first-failed-at") == String(now))
        #expect(header(retry, "traceparent") == "t1")
        #expect(retry.headers.filter { $0.name == "x-attempt" }.count == 1)
    }

    @Test func hangupRetriesUseTheStopWindowAndOriginalsAreKept() throws {
        let hangup = Fixtures.event(type: .hangup)
        let original: [KafkaHeader] = [
            KafkaHeader(name: "x-attempt", string: "3"),
            KafkaHeader(name: "x-original-topic", string: "calls"),
            KafkaHeader(name: "x-original-partition", string: "7"),
            KafkaHeader(name: "x-original-offset", string: "1000"),
            KafkaHeader(name: "x-original-timestamp", string: "1764489600100"),
            KafkaHeader(name: "x-first-failed-at", string: "1764489601000"),
            KafkaHeader(name: "x-error-class", string: "timeout"),
        ]
        let now = hangup.createdAtMilliseconds + 60_000
        let decision = router.route(
            record: record(topic: "calls.retry.30s", headers: original), event: hangup,
            answer: result(.retryLater, 429, "TooManyRequests"), topic: "t", now: now
        )
        #expect(decision.outcome == .retried)
        let retry = try #require(decision.records.first)
        #expect(retry.topic == "calls.retry.2m")
        #expect(header(retry, "x-attempt") == "4")
        #expect(header(retry, "x-original-partition") == "7")
        #expect(header(retry, "x-original-offset") == "1000")
        #expect(header(retry, "x-original-timestamp") == "1764489600100")
        #expect(header(retry, "x-first-failed-at") == "1764489601000")
        #expect(header(retry, "x-error-class") == "apns_429")
        #expect(retry.headers.filter { $0.name == "x-error-class" }.count == 1)
        #expect(header(retry, "x-deadline") == String(hangup.createdAtMilliseconds + 600_000))
    }

    @Test func longRingingCallUsesTheSecondTier() throws {
        let long = Fixtures.event(ringTimeout: 300)
        let decision = router.route(
            record: record(headers: [KafkaHeader(name: "x-attempt", string: "2")]), event: long,
            answer: result(.retryLater, nil, "Timeout"), topic: "t", now: long.createdAtMilliseconds + 6_000
        )
        #expect(decision.outcome == .retried)
        #expect(decision.records.first?.topic == "calls.retry.30s")
        #expect(decision.records.first.flatMap { header($0, "x-attempt") } == "3")
        #expect(decision.records.first.flatMap { header($0, "x-error-class") } == "timeout")
        #expect(decision.records.first.flatMap { header($0, "x-error-status") } == nil)
    }

    @Test func retryOfEndedCallIsCancelled() {
        let decision = router.route(
            record: record(), event: event, answer: result(.retryLater, nil, "Timeout"), topic: "t",
            now: now, callEnded: true
        )
        #expect(decision.outcome == .cancelled)
        #expect(decision.records.isEmpty)
    }

    @Test(arguments: [
        (nil as Int?, "Timeout" as String?, "timeout"), (nil, "ConnectionLost", "connect"), (nil, "NotProcessed", "not_processed"),
        (nil, nil, "transport"), (500, "InternalServerError", "apns_5xx"), (429, "TooManyRequests", "apns_429"),
        (403, "ExpiredProviderToken", "apns_4xx"),
    ])
    func errorClasses(status: Int?, reason: String?, expected: String) {
        #expect(ErrorClass(APNsResult(disposition: .retryLater, status: status, reason: reason)).rawValue == expected)
    }

    @Test func badHeadersOnRetryRecordsFallBackSafely() {
        let headers = [
            KafkaHeader(name: "x-attempt", string: "two"),
            KafkaHeader(name: "x-deadline", string: "soon"),
            KafkaHeader(name: "x-original-partition", string: "99999999999"),
            KafkaHeader(name: "x-original-topic", value: [0xFF]),
        ]
        let context = RetryContext(record: record(topic: "calls.retry.30s", headers: headers), event: event, policy: RetryPolicy())
        #expect(context.attempt == 3)  // tier 1 → at least attempt 3
        #expect(context.deadlineMilliseconds == event.ringDeadlineMilliseconds)
        #expect(context.originalPartition == 3)
        #expect(context.originalTopic == "calls.retry.30s")
        let main = RetryContext(record: record(headers: [KafkaHeader(name: "x-attempt", string: "-1")]), event: nil, policy: RetryPolicy())
        #expect(main.attempt == 1)
        #expect(main.deadlineMilliseconds == nil)
        #expect(main.originalTopic == "calls")
    }

    @Test func receiptsWhenEnabled() throws {
        var configuration = OutcomeRouter.Configuration()
        configuration.emitReceipts = true
        let router = OutcomeRouter(configuration: configuration)
        let decision = router.route(
            record: record(), event: event, answer: result(.delivered, 200, nil), topic: "t", now: now,
            latencyMilliseconds: 12
        )
        let receipt = try #require(decision.records.last)
        #expect(receipt.topic == "calls.outcomes")
        let expected: NSDictionary = [
            "event_id": Fixtures.uuid, "call_id": "c-42", "outcome": "delivered", "apns_id": Fixtures.uuid,
            "status": 200, "reason": NSNull(), "latency_ms": 12,
        ]
        #expect(Fixtures.object(receipt.value) == expected)
        let failed = router.route(record: record(), event: nil, rejected: EventDecodingError.Code.invalidJSON.rawValue, detail: "x")
        #expect(failed.records.count == 2)
        #expect(Fixtures.object(failed.records[1].value)?["outcome"] as? String == "dead_lettered")
        #expect(Fixtures.object(failed.records[1].value)?["reason"] as? String == "invalid_json")
    }

    @Test func everyDispositionHasExactlyOneOutcome() {
        for disposition in APNsDisposition.allCases {
            let decision = router.route(record: record(), event: event, answer: result(disposition, 500, "x"), topic: "t", now: now)
            #expect(Outcome.allCases.contains(decision.outcome))
            #expect(decision.records.count <= 1)
        }
    }
}

@Suite struct HeaderAndRetryPolicyTests {
    @Test(arguments: [0, 1, -1, 42, Int64.max, Int64.min + 1, 1_764_489_600_123])
    func integerRoundTrip(value: Int64) {
        #expect(HeaderCodec.decode(HeaderCodec.encode(value)) == value)
    }

    @Test(arguments: ["", "-", "+1", " 1", "1 ", "1a", "0x10", "99999999999999999999", "1.0"])
    func malformedIntegers(text: String) {
        #expect(HeaderCodec.decode(Array(text.utf8)) == nil)
    }

    @Test func lastHeaderWins() {
        let headers = [KafkaHeader(name: "x-attempt", string: "1"), KafkaHeader(name: "x-attempt", string: "3")]
        #expect(HeaderCodec.integer("x-attempt", in: headers) == 3)
    }

    @Test func tiersAndDueTimes() {
        let policy = RetryPolicy()
        #expect(policy.tierIndex(afterFailedAttempt: 1) == 0)
        #expect(policy.tierIndex(afterFailedAttempt: 3) == 2)
        #expect(policy.tierIndex(afterFailedAttempt: 4) == nil)
        #expect(policy.tierIndex(afterFailedAttempt: 0) == nil)
        var short = RetryPolicy()
        short.maximumAttempts = 2
        #expect(short.tierIndex(afterFailedAttempt: 2) == nil)
        var long = RetryPolicy()
        long.maximumAttempts = 7
        #expect((1...6).map { long.tierIndex(afterFailedAttempt: $0) } == [0, 1, 2, 2, 2, 2], "beyond the tiers: the last tier again")
        #expect(long.tierIndex(afterFailedAttempt: 7) == nil)
        var none = RetryPolicy()
        none.tiers = []
        #expect(none.tierIndex(afterFailedAttempt: 1) == nil)
        let main = KafkaMessage(topic: "calls", partition: 0, offset: 0, key: nil, value: [], timestampMilliseconds: 100)
        #expect(policy.notBefore(main, now: 0) == nil)
        var retry = KafkaMessage(
            topic: "calls.retry.30s", partition: 0, offset: 0, key: nil, value: [],
            headers: [KafkaHeader(name: "x-not-before", integer: 5_000)], timestampMilliseconds: 100
        )
        #expect(policy.notBefore(retry, now: 1_000) == 5_000)
        // A due time beyond now + the tier's delay (a writer whose clock runs ahead) waits one delay from now.
        retry.headers = [KafkaHeader(name: "x-not-before", integer: 86_400_000)]
        #expect(policy.notBefore(retry, now: 1_000) == 31_000)
        retry.headers = [KafkaHeader(name: "x-not-before", integer: .max)]
        #expect(policy.notBefore(retry, now: 1_000) == 31_000)
        retry.headers = [KafkaHeader(name: "x-not-before", string: "garbage")]
        #expect(policy.notBefore(retry, now: 1_000) == 30_100)  // timestamp + tier delay
        // Without the header, a timestamp at the end of time (valid in Kafka) neither overflows nor waits past a delay.
        retry.timestampMilliseconds = .max
        #expect(policy.notBefore(retry, now: 1_000) == 31_000)
        retry.headers = []
        retry.timestampMilliseconds = .min
        #expect(policy.notBefore(retry, now: 1_000) == .min + 30_000)
    }
}
