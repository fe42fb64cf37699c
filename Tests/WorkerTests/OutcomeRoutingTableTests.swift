import Kafka
@testable import APNs
import Foundation
import Testing
@testable import Worker

/// docs/call-handling.md, "Outcome routing (OutcomeRouter)": one argument per row of its table, and a check that the
/// table has exactly these rows.
@Suite struct OutcomeRoutingTableTests {
    static let section = "Outcome routing (OutcomeRouter)"

    /// Created 1_764_489_600_123, ring deadline 30 s later.
    static let event = Fixtures.event()
    static let now = event.createdAtMilliseconds + 1_000

    static func record(headers: [KafkaHeader] = [], value: [UInt8] = Array(Fixtures.eventJSON().utf8))
        -> KafkaMessage
    {
        KafkaMessage(
            topic: "calls", partition: 3, offset: 42, key: Array("c-42".utf8), value: value, headers: headers,
            timestampMilliseconds: 1_764_489_600_200
        )
    }

    /// What happened to the event: the router's entry point for it.
    enum Happening: Sendable {
        case rejected(code: String, detail: String)
        case dropped(Outcome, reason: String? = nil)
        case answered(APNsResult)

        static func rejected(_ error: EventDecodingError) -> Happening { .rejected(code: error.code.rawValue, detail: error.message) }
        static func rejected(_ error: PushMappingError) -> Happening { .rejected(code: error.code.rawValue, detail: error.message) }

        func route(_ router: OutcomeRouter, record: KafkaMessage, event: CallEvent?, now: Int64, callEnded: Bool = false)
            -> OutcomeRouter.Decision
        {
            switch self {
            case .rejected(let code, let detail): router.route(record: record, event: event, rejected: code, detail: detail)
            case .dropped(let outcome, let reason): router.route(record: record, event: event, dropped: outcome, reason: reason)
            case .answered(let result):
                router.route(record: record, event: event, answer: result, topic: "t", now: now, callEnded: callEnded)
            }
        }
    }

    static func answer(_ disposition: APNsDisposition, _ status: Int?, _ reason: String?) -> Happening {
        .answered(APNsResult(disposition: disposition, status: status, reason: reason, id: APNsID(Fixtures.uuid)))
    }

    static let serviceUnavailable = answer(.retryLater, 503, "ServiceUnavailable")

    static func header(_ record: KafkaProducerRecord?, _ name: String) -> String? { record?.headers.last(named: name)?.text }

    /// One row of the table: what happened, and the outcome, the topics of the records produced (in order) and the
    /// reason label the router gives; `check` asserts the rest of the row.
    struct Row: Sendable, CustomTestStringConvertible {
        var key: String
        var record: KafkaMessage = OutcomeRoutingTableTests.record()
        var event: CallEvent? = OutcomeRoutingTableTests.event
        var input: Happening
        var now: Int64 = OutcomeRoutingTableTests.now
        var callEnded = false
        var receipts = false
        var outcome: Outcome
        var topics: [String]
        var reason: String?
        var check: @Sendable (OutcomeRouter.Decision) -> Void = { _ in }

        var testDescription: String { key }
    }

    static let rows: [Row] = [
        Row(key: "decoding failed", event: nil,
            input: .rejected(EventDecodingError(.missingField("call_id"), "call_id is required")),
            outcome: .deadLettered, topics: ["calls.dlq"], reason: "missing_field:call_id",
            check: { #expect(header($0.records.first, "x-dlq-reason") == "missing_field:call_id") }),
        Row(key: "mapping failed", input: .rejected(PushMappingError(.payloadTooLarge, "too big")),
            outcome: .deadLettered, topics: ["calls.dlq"], reason: "payload_too_large",
            check: { #expect(header($0.records.first, "x-dlq-reason") == "payload_too_large") }),
        Row(key: "tracker said expired", input: .dropped(.expired), outcome: .expired, topics: [], reason: "expired"),
        Row(key: "tracker said cancelled", input: .dropped(.cancelled, reason: CancelReason.afterStop),
            outcome: .cancelled, topics: [], reason: "after_stop",
            check: { _ in
                let unnamed = OutcomeRouter().route(record: record(), event: event, dropped: .cancelled)
                #expect(unnamed.reason == "cancelled" && unnamed.records.isEmpty, "no reason given: the outcome's name")
            }),
        Row(key: "APNs delivered", input: answer(.delivered, 200, nil), outcome: .delivered, topics: [], reason: nil),
        Row(key: "APNs tokenInvalid", input: answer(.tokenInvalid, 410, "Unregistered"),
            outcome: .invalidated, topics: ["apns.tokens.invalidated"], reason: "Unregistered",
            check: { decision in
                let invalidation = decision.records.first
                #expect(invalidation?.key == Array(Fixtures.token.utf8))
                let fields = invalidation.flatMap { Fixtures.object($0.value) }
                #expect(Set(fields?.allKeys as? [String] ?? [])
                        == ["token", "topic", "environment", "reason", "apns_timestamp", "event_id"])
                let unknown = answer(.tokenInvalid, 410, "SomethingNew").route(OutcomeRouter(), record: record(), event: event, now: now)
                #expect(unknown.reason == "other")
                let none = answer(.tokenInvalid, 410, nil).route(OutcomeRouter(), record: record(), event: event, now: now)
                #expect(none.reason == "token_invalid")
            }),
        Row(key: "APNs permanent", input: answer(.permanent, 400, "BadTopic"),
            outcome: .deadLettered, topics: ["calls.dlq"], reason: "apns_rejected",
            check: { decision in
                let dlq = decision.records.first
                #expect(header(dlq, "x-dlq-reason") == "apns_rejected")
                #expect(header(dlq, "x-error-status") == "400" && header(dlq, "x-error-reason") == "BadTopic")
            }),
        Row(key: "no app for the bundle id", input: answer(.permanent, nil, "UnknownApp"),
            outcome: .deadLettered, topics: ["calls.dlq"], reason: "unknown_app",
            check: { #expect(header($0.records.first, "x-dlq-reason") == "unknown_app") }),
        Row(key: "APNs fixCredentials", input: answer(.fixCredentials, 403, "InvalidProviderToken"),
            outcome: .deadLettered, topics: ["calls.dlq"], reason: "apns_credentials",
            check: { #expect(header($0.records.first, "x-dlq-reason") == "apns_credentials") }),
        Row(key: "APNs retryLater, incoming of an ended call", input: serviceUnavailable, callEnded: true,
            outcome: .cancelled, topics: [], reason: "retry_after_stop",
            check: { _ in
                let hangup = serviceUnavailable.route(
                    OutcomeRouter(), record: record(), event: Fixtures.event(type: .hangup), now: now, callEnded: true)
                #expect(hangup.outcome == .retried, "a stop event of an ended call is retried")
            }),
        Row(key: "APNs retryLater, past the deadline", input: serviceUnavailable,
            now: event.ringDeadlineMilliseconds, outcome: .expired, topics: [], reason: "deadline"),
        Row(key: "APNs retryLater, attempts used up",
            record: record(headers: [KafkaHeader(name: "x-attempt", integer: 4)]),
            input: serviceUnavailable, outcome: .deadLettered, topics: ["calls.dlq"], reason: "retries_exhausted",
            check: { #expect(header($0.records.first, "x-attempt") == "4") }),
        // The second tier (30 s) would be due after the 30 s ring deadline.
        Row(key: "APNs retryLater, next tier due at or after the deadline",
            record: record(headers: [KafkaHeader(name: "x-attempt", integer: 2)]),
            input: serviceUnavailable, outcome: .expired, topics: [], reason: "deadline"),
        Row(key: "APNs retryLater otherwise", input: serviceUnavailable,
            outcome: .retried, topics: ["calls.retry.5s"], reason: "apns_5xx",
            check: { decision in
                let retry = decision.records.first
                #expect(retry?.partition == 3 && retry?.key == Array("c-42".utf8) && retry?.value == record().value)
                #expect(header(retry, "x-attempt") == "2")
                #expect(header(retry, "x-not-before") == String(now + 5_000))
                #expect(header(retry, "x-deadline") == String(event.ringDeadlineMilliseconds))
                #expect(header(retry, "x-original-offset") == "42")
                #expect(header(retry, "x-first-failed-at") == String(now))
                #expect(header(retry, "x-error-class") == "apns_5xx")
            }),
        Row(key: "dead letter of a long value",
            record: record(value: Array(repeating: 0x41, count: 70_000)), event: nil,
            input: .rejected(EventDecodingError(.invalidJSON, "not JSON")),
            outcome: .deadLettered, topics: ["calls.dlq"], reason: "invalid_json",
            check: { decision in
                #expect(decision.records.first?.value.count == 65_536)
                #expect(header(decision.records.first, "x-dlq-value-bytes") == "70000")
            }),
        // 8 002 bytes each (name and value): the first two fit in 16 384, the third does not.
        Row(key: "many headers of its own",
            record: record(headers: (1...3).map {
                KafkaHeader(name: "h\($0)", value: Array(repeating: 0x61, count: 8_000))
            }),
            input: serviceUnavailable, outcome: .retried, topics: ["calls.retry.5s"], reason: "apns_5xx",
            check: { decision in
                let names = decision.records.first?.headers.map(\.name) ?? []
                #expect(names.starts(with: ["h1", "h2", "x-headers-dropped"]) && !names.contains("h3"))
                #expect(header(decision.records.first, "x-headers-dropped") == "1")
            }),
        Row(key: "receipts on", event: nil, input: .rejected(EventDecodingError(.invalidJSON, "not JSON")),
            receipts: true, outcome: .deadLettered, topics: ["calls.dlq", "calls.outcomes"], reason: "invalid_json",
            check: { decision in
                let receipt = decision.records.last
                #expect(receipt?.key == Array("c-42".utf8))
                #expect(receipt.flatMap { Fixtures.object($0.value)?["outcome"] as? String } == "dead_lettered")
            }),
    ]

    @Test(arguments: rows)
    func row(_ row: Row) {
        var configuration = OutcomeRouter.Configuration()
        configuration.emitReceipts = row.receipts
        let decision = row.input.route(
            OutcomeRouter(configuration: configuration), record: row.record, event: row.event, now: row.now,
            callEnded: row.callEnded)
        #expect(decision.outcome == row.outcome)
        #expect(decision.records.map(\.topic) == row.topics)
        #expect(decision.reason == row.reason)
        row.check(decision)
    }

    @Test func theDocumentHasExactlyTheseRows() throws {
        #expect(try CallHandlingDoc.keys(section: Self.section) == Self.rows.map(\.key))
    }
}
