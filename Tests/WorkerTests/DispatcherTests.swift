import Kafka
import TestSupport
@testable import APNs
import Foundation
import Synchronization
@testable import Telemetry
import Testing

@testable import Worker

/// A sender whose answers the test controls: answered at once by `script`, or held until released.
final class ScriptedSender: PushSender {
    struct Sent: Sendable {
        let push: APNsPush
        var request: APNsRequest { push.request }
    }

    private let state = Mutex<(sent: [Sent], hold: Bool)>(([], false))
    private let script: @Sendable (APNsRequest) -> APNsResult

    init(hold: Bool = false, script: @escaping @Sendable (APNsRequest) -> APNsResult = { _ in .ok }) {
        self.script = script
        state.withLock { $0.hold = hold }
    }

    func send(_ pushes: [APNsPush]) {
        for push in pushes {
            let hold = state.withLock { state in
                state.sent.append(Sent(push: push))
                return state.hold
            }
            if !hold { push.answered(script(push.request)) }
        }
    }

    var sent: [Sent] { state.withLock { $0.sent } }

    /// Answers the held request at `index` with the script's answer.
    func release(_ index: Int) {
        let entry = state.withLock { $0.sent[index] }
        entry.push.answered(script(entry.request))
    }
}

/// A sender that answers 200 at once and keeps nothing (so nothing it holds keeps a dispatcher alive).
final class ImmediateSender: PushSender {
    func send(_ pushes: [APNsPush]) {
        for push in pushes { push.answered(.ok) }
    }
}

/// A producer that acknowledges, or fails the first `failures` attempts.
final class RecordingProducer: RecordProducer {
    private let state = Mutex<(records: [KafkaProducerRecord], failuresLeft: Int)>(([], 0))

    init(failures: Int = 0) { state.withLock { $0.failuresLeft = failures } }

    func produce(_ record: KafkaProducerRecord, reportingTo handler: any KafkaDeliveryHandler, tag: Int) {
        let fail = state.withLock { state in
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                return true
            }
            state.records.append(record)
            return false
        }
        handler.delivered(fail ? .failure(KafkaError(code: .transport, reason: "broker went away")) : .success(.of(record)),
                          tag: tag)
    }

    var records: [KafkaProducerRecord] { state.withLock { $0.records } }
}

/// Acknowledges the records it is given only when told to.
final class HoldingProducer: RecordProducer {
    private let waiting = Mutex<[(record: KafkaProducerRecord, handler: any KafkaDeliveryHandler, tag: Int)]>([])

    func produce(_ record: KafkaProducerRecord, reportingTo handler: any KafkaDeliveryHandler, tag: Int) {
        waiting.withLock { $0.append((record, handler, tag)) }
    }

    func acknowledgeAll() {
        for held in waiting.withLock({ waiting in defer { waiting.removeAll() }; return waiting }) {
            held.handler.delivered(.success(.of(held.record)), tag: held.tag)
        }
    }
}

extension KafkaDeliveryReport {
    /// The report of `record` as a broker would give it (partition 0 unless the record names one, no offset).
    static func of(_ record: KafkaProducerRecord) -> KafkaDeliveryReport {
        KafkaDeliveryReport(topic: record.topic, partition: record.partition ?? 0, offset: nil, id: 0)
    }
}

/// A backlog scanner whose scans the test runs: it records each request and, when told, reads them from `log`.
final class ScriptedScanner: BacklogScanner {
    struct Request: Sendable {
        let topic: String
        let partition: Int32
        let from: Int64
        /// nil: to the log's end.
        let to: Int64?
        let each: @Sendable ([UInt8]) -> Bool
        let finished: @Sendable (BacklogScanOutcome) -> Void
    }

    private let requests = Mutex<[Request]>([])

    func scan(
        topic: String, partition: Int32, from: Int64, to: Int64?, each: @escaping @Sendable ([UInt8]) -> Bool,
        finished: @escaping @Sendable (BacklogScanOutcome) -> Void
    ) {
        requests.withLock {
            $0.append(Request(topic: topic, partition: partition, from: from, to: to, each: each, finished: finished))
        }
    }

    /// The ranges asked for and not run yet (`Int64.max`: to the log's end).
    var ranges: [Range<Int64>] { requests.withLock { $0.map { $0.from..<($0.to ?? .max) } } }

    /// The topics of the scans asked for and not run yet.
    var topics: [String] { requests.withLock { $0.map(\.topic) } }

    /// Runs the oldest request over `log` (values by offset): hands its range's values to `each` until it says stop,
    /// then finishes it (failed instead when `fail`). Returns how many values `each` took.
    @discardableResult
    func runNext(over log: [Int64: String], fail: Bool = false) -> Int {
        let request = requests.withLock { $0.removeFirst() }
        guard !fail else {
            request.finished(BacklogScanOutcome(.failed, failure: "broker down"))
            return 0
        }
        var taken = 0
        for offset in request.from..<(request.to ?? (log.keys.max() ?? -1) + 1) {
            guard request.each(Array((log[offset] ?? "").utf8)) else {
                request.finished(BacklogScanOutcome(.stopped))
                return taken
            }
            taken += 1
        }
        request.finished(BacklogScanOutcome(.completed))
        return taken
    }
}

extension APNsResult {
    static let ok = APNsResult(disposition: .delivered, status: 200, reason: nil)
    static let unavailable = APNsResult(disposition: .retryLater, status: 503, reason: "ServiceUnavailable")
    static let unregistered = APNsResult(disposition: .tokenInvalid, status: 410, reason: "Unregistered", timestampMilliseconds: 1)
}

/// Collects `done` calls.
final class Outcomes: Sendable {
    private let state = Mutex<[String: [Outcome]]>([:])
    func callback(_ id: String) -> @Sendable (Outcome) -> Void {
        { outcome in self.state.withLock { $0[id, default: []].append(outcome) } }
    }
    subscript(id: String) -> [Outcome] { state.withLock { $0[id] ?? [] } }
    var all: [Outcome] { state.withLock { $0.values.flatMap { $0 } } }
}

@Suite struct DispatcherTests {
    let clock = ManualWallClock(millisecondsSinceEpoch: 1_764_489_600_123 + 1_000)

    func record(_ json: String, topic: String = "calls", offset: Int64 = 0, headers: [KafkaHeader] = []) -> KafkaMessage {
        KafkaMessage(topic: topic, partition: 0, offset: offset, key: Array("c-42".utf8), value: Array(json.utf8),
                      headers: headers, timestampMilliseconds: 1_764_489_600_123)
    }

    func dispatcher(
        _ sender: any PushSender, _ producer: any RecordProducer, registry: MetricsRegistry = MetricsRegistry(),
        scanner: (any BacklogScanner)? = nil, configure: (inout DispatcherConfiguration) -> Void = { _ in }
    ) -> Dispatcher {
        var configuration = DispatcherConfiguration()
        configuration.produceRetryInitial = .milliseconds(10)
        configure(&configuration)
        return Dispatcher(configuration: configuration, sender: sender, producer: producer, timers: clock, scanner: scanner,
                          metrics: WorkerMetrics(registry: registry), clock: clock, monotonic: clock)
    }

    @Test func deliveredCountsOnceAndProducesNothing() {
        let sender = ScriptedSender()
        let producer = RecordingProducer()
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        dispatcher(sender, producer, registry: registry).handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        #expect(outcomes["a"] == [.delivered])
        #expect(producer.records.isEmpty)
        #expect(sender.sent.count == 1)
        let text = registry.exposition()
        #expect(text.contains("callpush_outcomes_total{outcome=\"delivered\"} 1\n"))
        #expect(text.contains("callpush_events_consumed_total{topic=\"calls\"} 1\n"))
        #expect(text.contains("callpush_end_to_end_latency_seconds_count 1\n"))
        #expect(text.contains("callpush_inflight_events 0\n"))
    }

    /// `custom` members callpush writes itself are left out of the push, which is sent all the same, and counted.
    @Test func customKeysCallpushWritesItselfAreSkippedAndCounted() throws {
        let sender = ScriptedSender()
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        let json = Fixtures.eventJSON(extra: #","custom":{"aps":{"badge":9},"pushType":7,"room":"r-9"}"#)
        dispatcher(sender, RecordingProducer(), registry: registry).handle(record(json), done: outcomes.callback("a"))
        #expect(outcomes["a"] == [.delivered])
        let payload = try #require(sender.sent.first).request.payload
        let object = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        #expect(object["room"] as? String == "r-9")
        #expect(object["pushType"] as? Int == 1, "the mapper's own pushType, not the custom one")
        #expect(ExpositionSeries.value("callpush_custom_keys_skipped_total", in: registry.exposition()) == 2)
    }

    /// A finished event waits to be freed on the handling thread and holds its dispatcher meanwhile: `stop()` lets it
    /// go, and the dispatcher (with its sender and producer) is freed; `releaseFinished()` does the same while running.
    @Test(arguments: [false, true])
    func aStoppedOrDrainedDispatcherIsFreedWithItsFinishedEvents(drainInsteadOfStop: Bool) {
        let outcomes = Outcomes()
        let weak: WeakReference<Dispatcher> = {
            let dispatcher = dispatcher(ImmediateSender(), RecordingProducer())
            dispatcher.handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
            return WeakReference(dispatcher)
        }()
        #expect(outcomes["a"] == [.delivered])
        #expect(weak.object != nil, "the finished event keeps its dispatcher until it is freed")
        if drainInsteadOfStop { weak.object?.releaseFinished() } else { weak.object?.stop() }
        #expect(weak.object == nil)
    }

    @Test func processingTimeRunsFromHandOverToAcknowledgedRecords() {
        let sender = ScriptedSender(hold: true, script: { _ in .unregistered })
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        let dispatcher = dispatcher(sender, RecordingProducer(), registry: registry)
        dispatcher.handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        clock.advance(by: .milliseconds(7))  // 7 ms in flight: between the 5 ms and 7.5 ms buckets
        #expect(dispatcher.oldestInFlightAgeSeconds == 0.007)
        sender.release(0)
        #expect(outcomes["a"] == [.invalidated])
        let text = registry.exposition()
        #expect(text.contains("callpush_worker_processing_seconds_bucket{le=\"0.005\"} 0\n"))
        #expect(text.contains("callpush_worker_processing_seconds_bucket{le=\"0.0075\"} 1\n"))
        #expect(text.contains("callpush_worker_processing_seconds_count 1\n"))
        #expect(dispatcher.oldestInFlightAgeSeconds == 0)
    }

    /// Spans inside the worker are measured on the monotonic clock: an NTP step of the wall clock while an event is in
    /// flight neither ages it (a step forward would fire the stuck-event alert) nor stretches its processing time.
    @Test func aWallClockStepNeitherAgesAnEventInFlightNorStretchesItsTiming() {
        let sender = ScriptedSender(hold: true, script: { _ in .unregistered })
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        let dispatcher = dispatcher(sender, RecordingProducer(), registry: registry)
        dispatcher.handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        clock.advance(by: .milliseconds(3))
        clock.step(by: .seconds(3600))
        #expect(dispatcher.oldestInFlightAgeSeconds == 0.003)
        clock.step(by: .seconds(-7200))
        #expect(dispatcher.oldestInFlightAgeSeconds == 0.003)
        sender.release(0)
        #expect(outcomes["a"] == [.invalidated])
        let text = registry.exposition()
        #expect(text.contains("callpush_worker_processing_seconds_bucket{le=\"0.002\"} 0\n"))
        #expect(text.contains("callpush_worker_processing_seconds_bucket{le=\"0.003\"} 1\n"), "\(text)")
    }

    @Test func stagesSplitTheProcessingTime() {
        let sender = ScriptedSender(hold: true, script: { _ in .unregistered })
        let producer = HoldingProducer()
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        let dispatcher = dispatcher(sender, producer, registry: registry)
        dispatcher.handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        clock.advance(by: .milliseconds(2))  // the APNs leg
        sender.release(0)
        clock.advance(by: .milliseconds(12))  // the invalidation record's acknowledgement
        #expect(outcomes["a"].isEmpty)
        producer.acknowledgeAll()
        #expect(outcomes["a"] == [.invalidated])
        let text = registry.exposition()
        #expect(text.contains("callpush_worker_stage_seconds_bucket{stage=\"dispatch\",le=\"0.0001\"} 1\n"))
        #expect(text.contains("callpush_worker_stage_seconds_bucket{stage=\"acknowledge\",le=\"0.01\"} 0\n"))
        #expect(text.contains("callpush_worker_stage_seconds_bucket{stage=\"acknowledge\",le=\"0.015\"} 1\n"))
        #expect(text.contains("callpush_worker_processing_seconds_bucket{le=\"0.01\"} 0\n"))
        #expect(text.contains("callpush_worker_processing_seconds_bucket{le=\"0.015\"} 1\n"))
    }

    @Test func badJSONIsDeadLetteredWithItsReason() throws {
        let producer = RecordingProducer()
        let outcomes = Outcomes()
        dispatcher(ScriptedSender(), producer).handle(record("{\"event_id\":"), done: outcomes.callback("a"))
        #expect(outcomes["a"] == [.deadLettered])
        let dlq = try #require(producer.records.first)
        #expect(dlq.topic == "calls.dlq")
        #expect(dlq.headers.first { $0.name == "x-dlq-reason" }?.text == "invalid_json")
    }

    @Test func hangUpWaitsForItsIncomingThenGoes() {
        let sender = ScriptedSender(hold: true)
        let outcomes = Outcomes()
        let dispatcher = dispatcher(sender, RecordingProducer())
        dispatcher.handle(record(Fixtures.eventJSON()), done: outcomes.callback("incoming"))
        dispatcher.handle(record(Fixtures.eventJSON(type: "hangup", eventID: "e-2"), offset: 1), done: outcomes.callback("hangup"))
        #expect(sender.sent.count == 1)  // the hang-up waits behind the incoming in flight
        sender.release(0)
        #expect(outcomes["incoming"] == [.delivered])
        #expect(sender.sent.count == 2)
        #expect(String(decoding: sender.sent[1].request.payload, as: UTF8.self).contains("\"pushType\":2"))
        sender.release(1)
        #expect(outcomes["hangup"] == [.delivered])
    }

    @Test func hangUpCancelsAWaitingIncoming() {
        let sender = ScriptedSender(hold: true)
        let outcomes = Outcomes()
        let dispatcher = dispatcher(sender, RecordingProducer())
        dispatcher.handle(record(Fixtures.eventJSON(eventID: "e-1")), done: outcomes.callback("first"))
        dispatcher.handle(record(Fixtures.eventJSON(eventID: "e-2"), offset: 1), done: outcomes.callback("second"))
        dispatcher.handle(record(Fixtures.eventJSON(type: "hangup", eventID: "e-3"), offset: 2), done: outcomes.callback("hangup"))
        #expect(outcomes["second"] == [.cancelled])
        sender.release(0)
        sender.release(1)
        #expect(sender.sent.count == 2)
        #expect(outcomes["first"] == [.delivered])
        #expect(outcomes["hangup"] == [.delivered])
    }

    @Test func incomingAfterItsHangUpIsCancelledNotSent() {
        let sender = ScriptedSender()
        let outcomes = Outcomes()
        let dispatcher = dispatcher(sender, RecordingProducer())
        dispatcher.handle(record(Fixtures.eventJSON(type: "hangup", eventID: "e-9")), done: outcomes.callback("hangup"))
        dispatcher.handle(record(Fixtures.eventJSON(eventID: "e-1"), topic: "calls.retry.5s", offset: 1), done: outcomes.callback("late"))
        #expect(outcomes["late"] == [.cancelled])
        #expect(sender.sent.count == 1)
    }

    @Test func aHangUpLaterInTheBatchCancelsItsIncomingBeforeItRings() {
        let sender = ScriptedSender()
        let outcomes = Outcomes()
        let registry = MetricsRegistry()
        let names = ["incoming", "other", "hangup"]
        dispatcher(sender, RecordingProducer(), registry: registry).handle([
            record(Fixtures.eventJSON(eventID: "e-1")),
            record(Fixtures.eventJSON(eventID: "e-2", callID: "c-other"), offset: 1),
            record(Fixtures.eventJSON(type: "hangup", eventID: "e-3"), offset: 2),
        ], settlement: ClosureSettlement { record, outcome in outcomes.callback(names[Int(record.offset)])(outcome) })
        #expect(outcomes["incoming"] == [.cancelled])
        #expect(outcomes["other"] == [.delivered])
        #expect(outcomes["hangup"] == [.delivered], "the hang-up still goes: an earlier push may be ringing")
        #expect(sender.sent.map { String(decoding: $0.request.payload, as: UTF8.self).contains("\"pushType\":1") } == [true, false])
        #expect(registry.exposition().contains("callpush_cancellations_total{reason=\"look_ahead\"} 1"))
    }

    /// A newly assigned partition's backlog (offsets below its high watermark at assignment) is read through before
    /// its incoming events may ring: a hang-up anywhere in it cancels its incoming, however far apart they are.
    @Test func theBacklogOfANewAssignmentIsReadThroughBeforeRinging() {
        let sender = ScriptedSender()
        let outcomes = Outcomes()
        let dispatcher = dispatcher(sender, RecordingProducer())
        dispatcher.assigned(lanes: [0])
        func backlog(_ json: String, offset: Int64) -> KafkaMessage {
            var record = record(json, offset: offset)
            record.highWatermarkAtAssignment = 4
            return record
        }
        dispatcher.handle(backlog(Fixtures.eventJSON(eventID: "e-1", callID: "c-1"), offset: 0), done: outcomes.callback("c-1"))
        dispatcher.handle(backlog(Fixtures.eventJSON(eventID: "e-2", callID: "c-2"), offset: 1), done: outcomes.callback("c-2"))
        #expect(sender.sent.isEmpty, "incoming events of the backlog wait")
        dispatcher.handle(backlog(Fixtures.eventJSON(type: "hangup", eventID: "e-3", callID: "c-1"), offset: 2),
                          done: outcomes.callback("c-1 hangup"))
        #expect(sender.sent.count == 1, "a stop event goes at once")
        dispatcher.handle(backlog(Fixtures.eventJSON(eventID: "e-4", callID: "c-3"), offset: 3), done: outcomes.callback("c-3"))
        #expect(outcomes["c-1"] == [.cancelled], "its hang-up came later in the backlog")
        #expect(outcomes["c-2"] == [.delivered])
        #expect(outcomes["c-3"] == [.delivered], "the backlog's last record ends the read-ahead")
        dispatcher.handle(backlog(Fixtures.eventJSON(eventID: "e-5", callID: "c-4"), offset: 4), done: outcomes.callback("c-4"))
        #expect(outcomes["c-4"] == [.delivered], "after the backlog nothing waits")
    }

    /// A backlog with more incoming calls than the read-ahead may hold lets them go before its end, counted in
    /// `callpush_read_ahead_released_early_total{reason="limit"}`: a stop event further on no longer cancels them.
    @Test func aReadAheadCutShortByItsLimitIsCounted() {
        let sender = ScriptedSender()
        let outcomes = Outcomes()
        let registry = MetricsRegistry()
        let dispatcher = dispatcher(sender, RecordingProducer(), registry: registry) { $0.readAhead.maxHeldPerPartition = 2 }
        dispatcher.assigned(lanes: [0])
        for (offset, call) in ["c-1", "c-2", "c-1"].enumerated() {
            var event = record(Fixtures.eventJSON(type: offset == 2 ? "hangup" : "incoming", eventID: "e-\(offset)", callID: call),
                               offset: Int64(offset))
            event.highWatermarkAtAssignment = 100
            dispatcher.handle(event, done: outcomes.callback("\(call) \(offset)"))
        }
        #expect(outcomes["c-1 0"] == [.delivered], "let go at the limit, before its hang-up was read")
        let early = ExpositionSeries.value("callpush_read_ahead_released_early_total{reason=\"limit\"}", in: registry.exposition())
        #expect(early == 2)
        #expect(ExpositionSeries.value("callpush_read_ahead_released_early_total{reason=\"timeout\"}", in: registry.exposition()) == 0)
    }

    /// A backlog whose partition delivers nothing for the read-ahead's timeout lets its held calls go, counted in
    /// `callpush_read_ahead_released_early_total{reason="timeout"}`.
    @Test func aReadAheadCutShortByItsTimeoutIsCounted() {
        let outcomes = Outcomes()
        let registry = MetricsRegistry()
        let dispatcher = dispatcher(ScriptedSender(), RecordingProducer(), registry: registry) { $0.readAhead.timeout = .milliseconds(50) }
        dispatcher.assigned(lanes: [0])
        var event = record(Fixtures.eventJSON(eventID: "e-1", callID: "c-1"))
        event.highWatermarkAtAssignment = 100
        dispatcher.handle(event, done: outcomes.callback("c-1"))
        #expect(outcomes["c-1"].isEmpty)
        clock.advance(by: .milliseconds(49))
        #expect(outcomes["c-1"].isEmpty)
        clock.advance(by: .milliseconds(1))  // the partition delivered nothing for the timeout
        #expect(outcomes["c-1"] == [.delivered])
        #expect(ExpositionSeries.value("callpush_read_ahead_released_early_total{reason=\"timeout\"}", in: registry.exposition()) == 1)
    }

    /// A dispatcher whose backlog scans the test runs, with a read-ahead that holds 2 events per partition.
    func scanningDispatcher() -> (Dispatcher, ScriptedSender, ScriptedScanner, Outcomes, MetricsRegistry) {
        let sender = ScriptedSender()
        let scanner = ScriptedScanner()
        let registry = MetricsRegistry()
        let dispatcher = dispatcher(sender, RecordingProducer(), registry: registry, scanner: scanner) {
            $0.readAhead.maxHeldPerPartition = 2
        }
        return (dispatcher, sender, scanner, Outcomes(), registry)
    }

    /// A backlog of 100 records whose first incoming calls exceed the read-ahead's limit (2), with the hang-up of
    /// the first one far behind them: the backlog scan marks that call ended before anything of the partition rings,
    /// so the limit lets nothing go early and the call never rings (`look_ahead`); the others go once the scan is
    /// complete, and the hang-up itself goes when the consumer reaches it.
    @Test func aBacklogScanEndsCallsBeyondTheReadAheadsLimitBeforeTheyRing() {
        let (dispatcher, sender, scanner, outcomes, registry) = scanningDispatcher()
        var log: [Int64: String] = [:]
        for offset in Int64(0)..<100 { log[offset] = Fixtures.eventJSON(eventID: "e-\(offset)", callID: "c-\(offset)") }
        log[60] = Fixtures.eventJSON(type: "hangup", eventID: "e-hangup", callID: "c-0")
        dispatcher.assigned(lanes: [0])
        func consume(_ offset: Int64) {
            var event = record(log[offset]!, offset: offset)
            event.highWatermarkAtAssignment = 100
            dispatcher.handle(event, done: outcomes.callback("\(offset)"))
        }
        for offset in Int64(0)..<5 { consume(offset) }
        #expect(scanner.ranges == [0..<100], "one scan, from the first record to the high watermark at assignment")
        #expect(sender.sent.isEmpty, "the limit lets nothing go while the scan runs")
        #expect(scanner.runNext(over: log) == 100)
        #expect(outcomes["0"] == [.cancelled], "its hang-up is at offset 60")
        #expect((1..<5).allSatisfy { outcomes["\($0)"] == [.delivered] })
        consume(5)
        #expect(outcomes["5"] == [.delivered], "nothing waits after a complete scan")
        consume(60)
        #expect(outcomes["60"] == [.delivered], "the hang-up goes")
        let exposition = registry.exposition()
        #expect(ExpositionSeries.value("callpush_cancellations_total{reason=\"look_ahead\"}", in: exposition) == 1)
        #expect(ExpositionSeries.value("callpush_read_ahead_scans_total{result=\"completed\",scan=\"backlog\"}", in: exposition) == 1)
        #expect(ExpositionSeries.value("callpush_read_ahead_scan_ended_calls_total", in: exposition) == 1)
        #expect(ExpositionSeries.value("callpush_read_ahead_released_early_total{reason=\"limit\"}", in: exposition) == 0)
    }

    /// A scan that fails turns the lane back into the bounded read-ahead: held past its limit, it lets them go
    /// early (counted), and the failure is counted.
    @Test func aFailedBacklogScanFallsBackToTheBoundedReadAhead() {
        let (dispatcher, sender, scanner, outcomes, registry) = scanningDispatcher()
        dispatcher.assigned(lanes: [0])
        for offset in Int64(0)..<3 {
            var event = record(Fixtures.eventJSON(eventID: "e-\(offset)", callID: "c-\(offset)"), offset: offset)
            event.highWatermarkAtAssignment = 100
            dispatcher.handle(event, done: outcomes.callback("\(offset)"))
        }
        #expect(sender.sent.isEmpty)
        scanner.runNext(over: [:], fail: true)
        #expect((0..<3).allSatisfy { outcomes["\($0)"] == [.delivered] })
        let exposition = registry.exposition()
        #expect(ExpositionSeries.value("callpush_read_ahead_scans_total{result=\"failed\",scan=\"backlog\"}", in: exposition) == 1)
        #expect(ExpositionSeries.value("callpush_read_ahead_released_early_total{reason=\"limit\"}", in: exposition) == 3)
    }

    /// A retry-tier record of partition 0 whose event was first read at `origin` of the calls topic's partition 0.
    func retryRecord(callID: String, origin: Int64, offset: Int64) -> KafkaMessage {
        record(Fixtures.eventJSON(eventID: "e-retry-\(callID)", callID: callID), topic: "calls.retry.30s", offset: offset, headers: [
            KafkaHeader(name: HeaderCodec.originalTopic, string: "calls"),
            KafkaHeader(name: HeaderCodec.originalPartition, integer: 0),
            KafkaHeader(name: HeaderCodec.originalOffset, integer: origin),
        ])
    }

    /// The calls partition the history scans read: incoming calls c-0 … c-19 at offsets 0–19, and at 20 the hang-up
    /// of c-7, which this worker never read (the partition's previous owner sent it and committed past it).
    static let historyLog: [Int64: String] = {
        var log: [Int64: String] = [:]
        for offset in Int64(0)..<20 { log[offset] = Fixtures.eventJSON(eventID: "e-\(offset)", callID: "c-\(offset)") }
        log[20] = Fixtures.eventJSON(type: "hangup", eventID: "e-hangup", callID: "c-7")
        return log
    }()

    /// An incoming call's retry, reaching a worker newly assigned its partition whose calls partition delivered
    /// nothing: a history scan of the calls partition from the retry's first hop finds the hang-up the previous owner
    /// sent, and the retry never rings (`look_ahead`). A later retry from that hop on goes at once.
    @Test func aRetryWhoseHangUpThePreviousOwnerSentNeverRings() {
        let (dispatcher, sender, scanner, outcomes, registry) = scanningDispatcher()
        dispatcher.assigned(lanes: [0])
        dispatcher.handle(retryRecord(callID: "c-7", origin: 7, offset: 3), done: outcomes.callback("c-7"))
        #expect(scanner.ranges == [7..<Int64.max] && scanner.topics == ["calls"], "from the first hop to the high watermark")
        #expect(sender.sent.isEmpty && outcomes["c-7"].isEmpty, "it waits for the scan")
        #expect(scanner.runNext(over: Self.historyLog) == 14)
        #expect(outcomes["c-7"] == [.cancelled])
        #expect(sender.sent.isEmpty)
        dispatcher.handle(retryRecord(callID: "c-9", origin: 9, offset: 4), done: outcomes.callback("c-9"))
        #expect(outcomes["c-9"] == [.delivered] && scanner.ranges.isEmpty, "known from offset 7 on")
        let exposition = registry.exposition()
        #expect(ExpositionSeries.value("callpush_cancellations_total{reason=\"look_ahead\"}", in: exposition) == 1)
        #expect(ExpositionSeries.value("callpush_read_ahead_scans_total{result=\"completed\",scan=\"history\"}", in: exposition) == 1)
        #expect(ExpositionSeries.value("callpush_read_ahead_scan_ended_calls_total", in: exposition) == 1)
    }

    /// A retry past its ring deadline (its first hop's `x-deadline`; one that waited out an outage) is dropped as
    /// `expired` without having its partition's history scanned.
    @Test func anExpiredRetryAsksForNoHistoryScan() {
        let (dispatcher, sender, scanner, outcomes, _) = scanningDispatcher()
        dispatcher.assigned(lanes: [0])
        var retry = retryRecord(callID: "c-7", origin: 7, offset: 3)
        retry.headers.append(KafkaHeader(name: HeaderCodec.deadline, integer: 1_000))
        retry.highWatermarkAtAssignment = 4
        dispatcher.handle(retry, done: outcomes.callback("c-7"))
        #expect(scanner.ranges.isEmpty)
        var calls = record(Fixtures.eventJSON(eventID: "e-20", callID: "c-20"), offset: 20)
        calls.highWatermarkAtAssignment = 21
        dispatcher.handle(calls, done: outcomes.callback("c-20"))
        #expect(outcomes["c-7"] == [.expired] && sender.sent.count == 1)
    }

    /// A history scan that fails lets its retries go, counted as let go early (`history_scan_failed`).
    @Test func aFailedHistoryScanLetsItsRetriesGoCounted() {
        let (dispatcher, _, scanner, outcomes, registry) = scanningDispatcher()
        dispatcher.assigned(lanes: [0])
        dispatcher.handle(retryRecord(callID: "c-7", origin: 7, offset: 3), done: outcomes.callback("c-7"))
        scanner.runNext(over: Self.historyLog, fail: true)
        #expect(outcomes["c-7"] == [.delivered])
        let exposition = registry.exposition()
        #expect(ExpositionSeries.value("callpush_read_ahead_scans_total{result=\"failed\",scan=\"history\"}", in: exposition) == 1)
        #expect(ExpositionSeries.value("callpush_read_ahead_released_early_total{reason=\"history_scan_failed\"}", in: exposition) == 1)
    }

    /// A scan still running when the consumer has read through the backlog, or when the partition is revoked, is
    /// told to stop at its next record.
    @Test func aBacklogScanStopsOnceItIsNoLongerNeeded() {
        let scanner = ScriptedScanner()
        let outcomes = Outcomes()
        let dispatcher = dispatcher(ScriptedSender(), RecordingProducer(), scanner: scanner)
        let log = Dictionary(uniqueKeysWithValues: (Int64(0)..<3).map { ($0, Fixtures.eventJSON(eventID: "e-\($0)", callID: "c-\($0)")) })
        dispatcher.assigned(lanes: [0, 1])
        for (lane, offset) in [(Int32(0), Int64(0)), (0, 1), (0, 2), (1, 0)] {
            var event = record(log[offset]!, offset: offset)
            event.partition = lane
            event.highWatermarkAtAssignment = 3
            dispatcher.handle(event, done: outcomes.callback("\(lane)-\(offset)"))
        }
        #expect(scanner.ranges == [0..<3, 0..<3])
        #expect((0..<3).allSatisfy { outcomes["0-\($0)"] == [.delivered] }, "read through: the last record ends it")
        #expect(scanner.runNext(over: log) == 0)
        dispatcher.revoked(lanes: [1])
        #expect(scanner.runNext(over: log) == 0)
    }

    /// A revoked partition's held events are given back unprocessed (the next owner reads ahead through them): never
    /// sent, no outcome, not in flight any more.
    @Test func aRevokedPartitionGivesItsHeldEventsBack() {
        let sender = ScriptedSender()
        let outcomes = Outcomes()
        let givenBack = Outcomes()
        let dispatcher = dispatcher(sender, RecordingProducer())
        dispatcher.assigned(lanes: [0])
        var held = record(Fixtures.eventJSON(eventID: "e-1"), offset: 0)
        held.highWatermarkAtAssignment = 100
        dispatcher.handle([held], settlement: ClosureSettlement(
            done: { _, outcome in outcomes.callback("held")(outcome) }, giveBack: { _ in givenBack.callback("held")(.cancelled) }))
        #expect(dispatcher.inFlightCount == 1)
        dispatcher.revoked(lanes: [0])
        #expect(givenBack["held"].count == 1)
        #expect(outcomes["held"].isEmpty)
        #expect(sender.sent.isEmpty)
        #expect(dispatcher.inFlightCount == 0)
    }

    @Test func expiredIncomingIsNotSent() {
        let sender = ScriptedSender()
        let outcomes = Outcomes()
        clock.advance(by: .milliseconds(31_000))
        dispatcher(sender, RecordingProducer()).handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        #expect(outcomes["a"] == [.expired])
        #expect(sender.sent.isEmpty)
    }

    @Test func transientFailureGoesToTheFirstRetryTier() throws {
        let producer = RecordingProducer()
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        dispatcher(ScriptedSender { _ in .unavailable }, producer, registry: registry)
            .handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        #expect(outcomes["a"] == [.retried])
        let retry = try #require(producer.records.first)
        #expect(retry.topic == "calls.retry.5s")
        #expect(retry.headers.first { $0.name == "x-attempt" }?.text == "2")
        #expect(registry.exposition().contains("callpush_retries_total{tier=\"calls.retry.5s\"} 1\n"))
    }

    @Test func deadTokenProducesAnInvalidationRecord() throws {
        let producer = RecordingProducer()
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        dispatcher(ScriptedSender { _ in .unregistered }, producer, registry: registry)
            .handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        #expect(outcomes["a"] == [.invalidated])
        #expect(producer.records.first?.topic == "apns.tokens.invalidated")
        #expect(registry.exposition().contains("callpush_token_invalidations_total{reason=\"Unregistered\"} 1\n"))
    }

    /// A failed produce is tried again after 10, 20, 40 ms (doubling from `produceRetryInitial`); the outcome waits.
    @Test func outcomeWaitsForTheProduceToSucceed() {
        let producer = RecordingProducer(failures: 3)
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        dispatcher(ScriptedSender { _ in .unavailable }, producer, registry: registry)
            .handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        for wait in [10, 20, 40] {
            clock.advance(by: .milliseconds(wait - 1))
            #expect(outcomes["a"].isEmpty && producer.records.isEmpty, "retried before its back-off of \(wait) ms")
            clock.advance(by: .milliseconds(1))
        }
        #expect(outcomes["a"] == [.retried])
        #expect(producer.records.count == 1)
        #expect(registry.exposition().contains("callpush_produce_failures_total{topic=\"calls.retry.5s\"} 3\n"))
    }

    @Test func afterStopAFailingProduceNeverCompletes() {
        let producer = RecordingProducer(failures: 1_000)
        let outcomes = Outcomes()
        let dispatcher = dispatcher(ScriptedSender { _ in .unavailable }, producer)
        dispatcher.handle(record(Fixtures.eventJSON()), done: outcomes.callback("a"))
        #expect(clock.scheduledJobs == 1, "the failed produce waits for its back-off")
        dispatcher.stop()
        clock.advance(by: .seconds(10))  // the back-off's retry runs, fails, and must neither complete nor retry
        #expect(outcomes["a"].isEmpty)
        #expect(clock.scheduledJobs == 0)
        #expect(dispatcher.inFlightCount == 1)
    }

    @Test func everyEventEndsInExactlyOneOutcome() throws {
        var generator = SplitMix64(seed: 7)
        let answers: [APNsResult] = [.ok, .unavailable, .unregistered,
                                     APNsResult(disposition: .permanent, status: 400, reason: "BadTopic")]
        let sender = ScriptedSender { request in answers[Int(request.payload.count) % answers.count] }
        let registry = MetricsRegistry()
        let outcomes = Outcomes()
        let dispatcher = dispatcher(sender, RecordingProducer(), registry: registry)
        let total = 2_000
        for index in 0..<total {
            let call = "c-\(Int.random(in: 0..<50, using: &generator))"
            let json: String
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: json = "not json"
            case 1: json = Fixtures.eventJSON(type: "hangup", eventID: "h-\(index)", callID: call)
            case 2: json = Fixtures.eventJSON(eventID: "x-\(index)", callID: call, createdAt: 1)
            default: json = Fixtures.eventJSON(eventID: "i-\(index)", callID: call, extra: String(repeating: " ", count: index % 7))
            }
            dispatcher.handle(record(json, offset: Int64(index)), done: outcomes.callback("\(index)"))
        }
        for index in 0..<total { #expect(outcomes["\(index)"].count == 1, "event \(index)") }
        let text = registry.exposition()
        let counted = Outcome.allCases.map { outcome -> Int in
            let prefix = "callpush_outcomes_total{outcome=\"\(outcome.rawValue)\"} "
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
        }
        #expect(counted.reduce(0, +) == total)
    }
}
