@testable import APNs
import Foundation
import Synchronization
@testable import Kafka
@testable import Telemetry
import Testing

@testable import Worker

@Suite(.serialized) struct WorkerServiceTests {
    /// Retries keep their partition number, so a retry tier with another partition count is refused at start.
    @Test func aRetryTierWithAnotherPartitionCountIsRefused() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        var configuration = WorkerConfiguration()
        configuration.consumer.bootstrapServers = cluster.bootstrapServers
        configuration.producer.bootstrapServers = cluster.bootstrapServers
        for topic in configuration.allTopics {
            try cluster.createTopic(topic, partitions: topic == "calls.retry.30s" ? 2 : 4)
        }
        let worker = try WorkerService(configuration: configuration, sender: ScriptedSender(), registry: MetricsRegistry(),
                                       logger: Logger(label: "test", level: .critical))
        #expect {
            try worker.start()
        } throws: { error in
            let kafka = error as? KafkaError
            return kafka?.code == .configuration
                && kafka?.reason.hasPrefix("topic calls has 4 partitions but calls.retry.30s has 2: every retry tier") == true
        }
    }

    /// A subscribed topic the cluster lacks is refused at start, by name; an output topic it lacks is not (clusters
    /// that create topics on demand make it at the first record).
    @Test func aMissingSubscribedTopicIsRefusedAndAMissingOutputTopicIsNot() async throws {
        for missing in ["calls.retry.30s", "calls.dlq"] {
            let cluster = try KafkaMockCluster(brokers: 1)
            defer { cluster.close() }
            var configuration = WorkerConfiguration()
            configuration.consumer.bootstrapServers = cluster.bootstrapServers
            configuration.producer.bootstrapServers = cluster.bootstrapServers
            for topic in configuration.allTopics where topic != missing {
                try cluster.createTopic(topic, partitions: 4)
            }
            let worker = try WorkerService(configuration: configuration, sender: ScriptedSender(),
                                           registry: MetricsRegistry(), logger: Logger(label: "test", level: .critical))
            if configuration.subscribedTopics.contains(missing) {
                #expect {
                    try worker.start()
                } throws: { error in
                    (error as? KafkaError)?.code == .unknownTopicOrPartition
                        && (error as? KafkaError)?.reason == "topic \(missing) does not exist"
                }
            } else {
                try worker.start()
            }
            await worker.shutdown()
        }
    }

    @Test func everyOutcomePathThroughKafka() async throws {
        let harness = try PipelineHarness()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let failOnce = FailFirst()
        let sender = ScriptedSender { request in
            let payload = String(decoding: request.payload, as: UTF8.self)
            if payload.contains("dead-token") { return .unregistered }
            if payload.contains("flaky") { return failOnce.answer(for: payload) }
            if payload.contains("rejected") { return APNsResult(disposition: .permanent, status: 400, reason: "BadTopic") }
            return .ok
        }
        let registry = MetricsRegistry()
        let worker = try harness.makeWorker(sender: sender, registry: registry)
        var events: [(String, String)] = []
        events.append(("c-ok", Fixtures.eventJSON(eventID: "e-ok", callID: "c-ok", createdAt: now)))
        events.append(("c-dead", Fixtures.eventJSON(eventID: "e-dead", callID: "c-dead", createdAt: now, extra: ",\"custom\":{\"tag\":\"dead-token\"}")))
        events.append(("c-flaky", Fixtures.eventJSON(eventID: "e-flaky", callID: "c-flaky", createdAt: now, extra: ",\"custom\":{\"tag\":\"flaky\"}")))
        events.append(("c-rej", Fixtures.eventJSON(eventID: "e-rej", callID: "c-rej", createdAt: now, extra: ",\"custom\":{\"tag\":\"rejected\"}")))
        events.append(("c-old", Fixtures.eventJSON(eventID: "e-old", callID: "c-old", createdAt: now - 120_000)))
        events.append(("c-bad", "{not json"))
        try await harness.produce(events.map { (callID: $0.0, json: $0.1) })
        // 6 consumed from calls + 1 redelivered from the retry tier.
        let finished = await PipelineHarness.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry).total >= 7 }
        #expect(finished)
        let outcomes = PipelineHarness.outcomes(registry)
        #expect(outcomes[.delivered] == 2)  // e-ok, and e-flaky on its second attempt
        #expect(outcomes[.invalidated] == 1)
        #expect(outcomes[.retried] == 1)
        #expect(outcomes[.deadLettered] == 2)
        #expect(outcomes[.expired] == 1)
        let invalidated = try await harness.read(["apns.tokens.invalidated"], atLeast: 1)
        #expect(invalidated.count == 1)
        let invalidation = try #require(invalidated.first.flatMap { try JSONSerialization.jsonObject(with: Data($0.value)) as? [String: Any] })
        #expect(invalidation["reason"] as? String == "Unregistered")
        #expect(invalidation["event_id"] as? String == "e-dead")
        let dlq = try await harness.read(["calls.dlq"], atLeast: 2)
        #expect(Set(dlq.compactMap { $0.header("x-dlq-reason").map { String(decoding: $0, as: UTF8.self) } })
                == ["invalid_json", "apns_rejected"])
        await worker.shutdown()
        #expect(worker.dispatcher.inFlightCount == 0)
    }
}

/// Answers 503 the first time a payload is seen, then 200.
final class FailFirst: Sendable {
    private let seen = Mutex<Set<String>>([])
    func answer(for payload: String) -> APNsResult {
        seen.withLock { $0.insert(payload).inserted } ? .unavailable : .ok
    }
}
