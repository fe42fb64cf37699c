@testable import APNs
@testable import APNsMock
@testable import EmbeddedPipeline
import Foundation
@testable import Kafka
@testable import Telemetry
import TestSupport
import Testing

@testable import Worker

/// The whole pipeline in one process: embedded Kafka cluster → worker → APNs client → mock APNs over TLS.
@Suite(.serialized) struct EndToEndTests {
    static let bundleID = "com.example.callpush"

    static func event(_ id: String, call: String, type: String = "incoming", token: String = String(repeating: "ab", count: 32),
                      push: String = "alert", topic: String = bundleID, createdAt: Int64? = nil) -> String {
        let created = createdAt ?? Int64(Date().timeIntervalSince1970 * 1000)
        return #"{"event_id":"\#(id)","type":"\#(type)","call_id":"\#(call)","device_token":"\#(token)","push":"\#(push)","topic":"\#(topic)","environment":"production","created_at":\#(created),"ring_timeout_s":30}"#
    }

    static func produce(_ pipeline: EmbeddedPipeline, _ events: [(call: String, json: String)]) async throws {
        let producer = try pipeline.makeProducer(clientID: "e2e-\(UUID().uuidString.prefix(6))")
        for event in events {
            _ = try await producer.send(KafkaProducerRecord(topic: "calls", key: Array(event.call.utf8), value: Array(event.json.utf8)))
        }
        await producer.close()
    }

    /// `callpush_events_consumed_total` summed over topics.
    static func consumed(_ registry: MetricsRegistry) -> Int {
        Int(ExpositionSeries.sum("callpush_events_consumed_total", in: registry.exposition()))
    }

    static func terminal(_ pipeline: EmbeddedPipeline) -> Int {
        pipeline.outcomes.filter { $0.key != .retried }.values.reduce(0, +)
    }

    static func started(_ configuration: EmbeddedPipelineConfiguration = .init()) async throws -> EmbeddedPipeline {
        let pipeline = try EmbeddedPipeline(configuration: configuration)
        let readiness = ReadinessFlag()
        try pipeline.startWorker(readiness: readiness)
        _ = await Eventually.waitUntil(timeout: .seconds(20)) { readiness.isReady }
        return pipeline
    }

    @Test func everyOutcomePathOverTLS() async throws {
        var configuration = EmbeddedPipelineConfiguration()
        let dead = String(repeating: "de", count: 32)
        configuration.faults.unregisteredTokens = [dead]
        let pipeline = try await Self.started(configuration)
        let past = Int64(Date().timeIntervalSince1970 * 1000) - 120_000
        try await Self.produce(pipeline, [
            ("c-ok", Self.event("e-ok", call: "c-ok")),
            ("c-voip", Self.event("e-voip", call: "c-voip", push: "voip")),
            ("c-dead", Self.event("e-dead", call: "c-dead", token: dead)),
            ("c-topic", Self.event("e-topic", call: "c-topic", topic: "com.other.app")),
            ("c-old", Self.event("e-old", call: "c-old", token: String(repeating: "01", count: 32), createdAt: past)),
            ("c-bad", #"{"event_id":"e-bad","type":"incoming"}"#),
        ])
        let done = await Eventually.waitUntil(timeout: .seconds(30)) { Self.terminal(pipeline) >= 6 }
        #expect(done)
        let outcomes = pipeline.outcomes
        #expect(outcomes[.delivered] == 2)
        #expect(outcomes[.invalidated] == 1)
        #expect(outcomes[.deadLettered] == 2)  // missing fields; TopicDisallowed from APNs
        #expect(outcomes[.expired] == 1)
        let sentTokens = pipeline.mock.recorder.entries.map { $0.path }
        #expect(!sentTokens.contains { $0.hasSuffix(String(repeating: "01", count: 32)) }, "an expired call is never sent")
        #expect(pipeline.mock.recorder.entries.contains { $0.path.hasSuffix(dead) && $0.status == 410 })
        #expect(pipeline.registry.exposition().contains("callpush_dead_letters_total{reason=\"apns_rejected\"} 1\n"))
        #expect(pipeline.registry.exposition().contains("callpush_dead_letters_total{reason=\"missing_field\"} 1\n"))
        await pipeline.shutdown()
    }

    /// `mockRecorderCapacity` 0 (`callpush demo`, the benchmarks): the mock keeps no request, yet counts every one.
    @Test func aMockKeepingCountsOnlyStillCountsEveryPush() async throws {
        var configuration = EmbeddedPipelineConfiguration()
        configuration.mockRecorderCapacity = 0
        let pipeline = try await Self.started(configuration)
        try await Self.produce(pipeline, (0..<10).map { ("c-\($0)", Self.event("e-\($0)", call: "c-\($0)")) })
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { Self.terminal(pipeline) >= 10 })
        #expect(pipeline.outcomes[.delivered] == 10)
        #expect(pipeline.mock.recorder.totalCount == 10)
        #expect(pipeline.mock.recorder.count("Success") == 10)
        #expect(pipeline.mock.recorder.entries.isEmpty)
        await pipeline.shutdown()
    }

    /// After shutdown nothing keeps the pipeline's APNs client, its worker's dispatcher or a producer it made: the
    /// registry they share once held the dispatcher (a metrics collector), which held the client, and each closed
    /// connection held itself; a producer's close watchdog kept the producer 25 s (past this test's bound), the
    /// read-ahead's expiry timer the dispatcher 5 s.
    @Test func aShutDownPipelineIsReleased() async throws {
        let client: WeakReference<APNsClient>
        let mock: WeakReference<APNsMockServer>
        let worker: WeakReference<WorkerService>
        let dispatcher: WeakReference<Dispatcher>
        let producer: WeakReference<KafkaProducer>
        let registry = MetricsRegistry()
        do {
            let pipeline = try EmbeddedPipeline(registry: registry)
            let readiness = ReadinessFlag()
            let started = try pipeline.startWorker(readiness: readiness)
            client = WeakReference(pipeline.client)
            mock = WeakReference(pipeline.mock)
            worker = WeakReference(started)
            dispatcher = WeakReference(started.dispatcher)
            #expect(await Eventually.waitUntil(timeout: .seconds(20)) { readiness.isReady })
            let generator = try pipeline.makeProducer()
            producer = WeakReference(generator)
            for index in 0..<20 {
                let event = Self.event("e-\(index)", call: "c-\(index)")
                _ = try await generator.send(KafkaProducerRecord(topic: "calls", key: Array("c-\(index)".utf8), value: Array(event.utf8)))
            }
            await generator.close()
            #expect(await Eventually.waitUntil(timeout: .seconds(30)) { Self.terminal(pipeline) >= 20 })
            await pipeline.shutdown()
        }
        // The registry is still referenced here, as a process's registry outlives its workers.
        #expect(await Eventually.waitUntil(timeout: .seconds(20)) {
            client.object == nil && mock.object == nil && worker.object == nil && dispatcher.object == nil && producer.object == nil
        }, """
            client released \(client.object == nil), mock \(mock.object == nil), worker \(worker.object == nil), \
            dispatcher \(dispatcher.object == nil), producer \(producer.object == nil)
            """)
        _ = registry.exposition()  // its collectors still run, without the dispatcher
    }

    @Test func aHangUpCancelsThePendingRetryOfItsCall() async throws {
        var configuration = EmbeddedPipelineConfiguration()
        configuration.faults.serviceUnavailableProbability = 1
        // A first tier long enough that the hang-up surely arrives while the incoming waits in it.
        configuration.worker.dispatcher.routing.retry.tiers[0].delay = .seconds(5)
        let pipeline = try await Self.started(configuration)
        let token = String(repeating: "5a", count: 32)
        try await Self.produce(pipeline, [("c-1", Self.event("e-in", call: "c-1", token: token))])
        // Generous bounds (they end as soon as the condition holds): the full suite loads both cores.
        #expect(await Eventually.waitUntil(timeout: .seconds(60)) { (pipeline.outcomes[.retried] ?? 0) >= 1 })
        pipeline.mock.faults.update { $0.serviceUnavailableProbability = 0 }
        try await Self.produce(pipeline, [("c-1", Self.event("e-hang", call: "c-1", type: "hangup", token: token))])
        #expect(await Eventually.waitUntil(timeout: .seconds(60)) { pipeline.outcomes[.cancelled] == 1 })
        let outcomes = pipeline.outcomes
        #expect(outcomes[.delivered] == 1)  // the hang-up
        #expect(outcomes[.cancelled] == 1)  // the incoming, when its retry came due
        // The incoming may have been retried (and refused) more than once before the hang-up arrived, but never
        // accepted, and never sent after the hang-up.
        let entries = pipeline.mock.recorder.entries
        let payloads = entries.map { String(decoding: $0.payload, as: UTF8.self) }
        let hangUps = payloads.indices.filter { payloads[$0].contains("\"pushType\":2") }
        let incomings = payloads.indices.filter { payloads[$0].contains("\"pushType\":1") }
        #expect(hangUps.count == 1)
        #expect(!incomings.isEmpty && incomings.allSatisfy { entries[$0].status == 503 })
        #expect(incomings.allSatisfy { $0 < hangUps[0] }, "the phone never rings after the hang-up")
        await pipeline.shutdown()
    }

    @Test func outcomesAddUpUnder5xxStormsGoAwaysAndBrokerFaults() async throws {
        var configuration = EmbeddedPipelineConfiguration()
        configuration.faults = APNsMockFaults(
            unregisteredTokens: CallTrafficGenerator.deadTokens,
            internalServerErrorProbability: 0.05, serviceUnavailableProbability: 0.2,
            goAwayAfterStreams: 150, dropConnectionProbability: 0.002)
        let pipeline = try await Self.started(configuration)
        let generator = CallTrafficGenerator(producer: try pipeline.makeProducer(), bundleID: Self.bundleID)
        let generation = Task { await generator.run(rate: 300, count: 1_500, duration: .seconds(20)) }
        // About a second of traffic consumed first.
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { Self.consumed(pipeline.registry) >= 300 }, "traffic flows")
        // Broker faults while traffic flows: produce and fetch errors, and the leader of partition 0 going away.
        pipeline.cluster.pushRequestErrors(.produce, Array(repeating: .notLeaderForPartition, count: 5))
        pipeline.cluster.pushRequestErrors(.fetch, Array(repeating: .notLeaderForPartition, count: 5))
        try ChildProcess.withNoneStarting { () throws(KafkaError) in try pipeline.cluster.setBrokerDown(1) }
        try await Task.sleep(for: .seconds(2))
        try pipeline.cluster.setBrokerUp(1)
        let produced = await generation.value
        #expect(produced == 1_500)
        // The topic, not the generator's acknowledgements, says what there was to process: librdkafka 2.0.2's mock
        // broker accepts a batch whose predecessor got an injected error (a real broker answers
        // OUT_OF_ORDER_SEQUENCE_NUMBER), and the idempotent producer then counts that predecessor as "implicitly acked
        // by subsequent batch success" although it was never stored — about one run in three loses a record that way.
        // Each of the 5 injected produce errors can lose one batch of at most a few records at 300 events/s.
        // An event is known by its id, or by its record's key when it has none (undecodable events; receipts keep
        // the record's key).
        func identity(_ eventID: String?, key: [UInt8]?) -> String {
            eventID ?? "key:" + String(decoding: key ?? [], as: UTF8.self)
        }
        let bootstrap = pipeline.cluster.bootstrapServers
        let stored = try await PipelineHarness.read(bootstrap: bootstrap, ["calls"], atLeast: produced, timeout: .seconds(10))
        let decoder = CallEventDecoder()
        let storedIDs = Set(stored.map { identity(try? decoder.decode($0.value).eventID, key: $0.key) })
        #expect(storedIDs.count <= produced && produced - storedIDs.count <= 30, "\(storedIDs.count) of \(produced) stored")
        _ = await Eventually.waitUntil(timeout: .seconds(120)) { Self.terminal(pipeline) >= storedIDs.count }
        _ = await Eventually.waitUntil(timeout: .seconds(10)) {
            WorkerMetrics(registry: pipeline.registry).inFlight.value == 0
        }
        // Every consumed event (duplicates after broker faults included) ended in exactly one outcome…
        let outcomes = pipeline.outcomes
        let consumed = Self.consumed(pipeline.registry)
        #expect(outcomes.values.reduce(0, +) == consumed, "outcomes \(outcomes) vs consumed \(consumed)")
        #expect((outcomes[.retried] ?? 0) > 0)
        #expect((outcomes[.invalidated] ?? 0) > 0)
        // …and every event the calls topic holds reached a final outcome: its receipt is on the outcomes topic.
        let receipts = try await PipelineHarness.read(bootstrap: bootstrap, ["calls.outcomes"], atLeast: consumed)
        var finished = Set<String>()
        for receipt in receipts {
            guard let object = try? JSONSerialization.jsonObject(with: Data(receipt.value)) as? [String: Any],
                  object["outcome"] as? String != Outcome.retried.rawValue else { continue }
            finished.insert(identity(object["event_id"] as? String, key: receipt.key))
        }
        let unfinished = storedIDs.subtracting(finished)
        #expect(unfinished.isEmpty, "nothing lost: \(unfinished.count) stored events without a final receipt, e.g. \(unfinished.prefix(3))")
        print("broker faults: \(consumed - storedIDs.count - (outcomes[.retried] ?? 0)) duplicate consumptions of "
            + "\(storedIDs.count) stored events; acknowledged but never stored by the mock broker: \(produced - storedIDs.count)")
        await pipeline.shutdown()
    }
}
