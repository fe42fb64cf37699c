import APNs
import APNsMock
import EmbeddedPipeline
import Foundation
import Kafka
import Telemetry
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

    static func terminal(_ pipeline: EmbeddedPipeline) -> Int {
        pipeline.outcomes.filter { $0.key != .retried }.values.reduce(0, +)
    }

    static func started(_ configuration: EmbeddedPipelineConfiguration = .init()) async throws -> EmbeddedPipeline {
        let pipeline = try EmbeddedPipeline(configuration: configuration)
        let readiness = ReadinessFlag()
        try pipeline.startWorker(readiness: readiness)
        _ = await PipelineHarness.waitUntil(timeout: .seconds(20)) { readiness.isReady }
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
        let done = await PipelineHarness.waitUntil(timeout: .seconds(30)) { Self.terminal(pipeline) >= 6 }
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

    @Test func aHangUpCancelsThePendingRetryOfItsCall() async throws {
        var configuration = EmbeddedPipelineConfiguration()
        configuration.faults.serviceUnavailableProbability = 1
        let pipeline = try await Self.started(configuration)
        let token = String(repeating: "5a", count: 32)
        try await Self.produce(pipeline, [("c-1", Self.event("e-in", call: "c-1", token: token))])
        #expect(await PipelineHarness.waitUntil(timeout: .seconds(20)) { pipeline.outcomes[.retried] == 1 })
        pipeline.mock.faults.update { $0.serviceUnavailableProbability = 0 }
        try await Self.produce(pipeline, [("c-1", Self.event("e-hang", call: "c-1", type: "hangup", token: token))])
        #expect(await PipelineHarness.waitUntil(timeout: .seconds(20)) { pipeline.outcomes[.cancelled] == 1 })
        let outcomes = pipeline.outcomes
        #expect(outcomes[.delivered] == 1)  // the hang-up
        #expect(outcomes[.cancelled] == 1)  // the incoming, when its retry came due
        let payloads = pipeline.mock.recorder.entries.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(payloads.filter { $0.contains("\"pushType\":1") }.count == 1, "the incoming call was sent once, refused, never again")
        #expect(payloads.filter { $0.contains("\"pushType\":2") }.count == 1)
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
        try await Task.sleep(for: .seconds(1))
        // Broker faults while traffic flows: produce and fetch errors, and the leader of partition 0 going away.
        pipeline.cluster.pushRequestErrors(.produce, Array(repeating: .notLeaderForPartition, count: 5))
        pipeline.cluster.pushRequestErrors(.fetch, Array(repeating: .notLeaderForPartition, count: 5))
        try pipeline.cluster.setBrokerDown(1)
        try await Task.sleep(for: .seconds(2))
        try pipeline.cluster.setBrokerUp(1)
        let produced = await generation.value
        #expect(produced == 1_500)
        let done = await PipelineHarness.waitUntil(timeout: .seconds(60)) { Self.terminal(pipeline) >= produced }
        let outcomes = pipeline.outcomes
        #expect(done, "outcomes so far: \(outcomes)")
        #expect(Self.terminal(pipeline) == produced, "every event ends in exactly one final outcome")
        #expect((outcomes[.retried] ?? 0) > 0)
        #expect((outcomes[.invalidated] ?? 0) > 0)
        await pipeline.shutdown()
    }
}
