@testable import APNs
@testable import EmbeddedPipeline
import Foundation
@testable import Kafka
import Runtime
import Synchronization
@testable import Telemetry
import TestSupport

@testable import Worker

/// An embedded Kafka cluster with every worker topic, a producer for call events, and readers for the output
/// topics: the end-to-end test bed.
final class PipelineHarness: Sendable {
    let cluster: KafkaMockCluster
    let configuration: WorkerConfiguration
    let group: String
    /// Runs the workers' delayed work, as the APNs client's event loops do in `callpush run`.
    let loops: EventLoopGroup
    static let partitions = 4

    /// - Parameter retryDelays: short retry tiers so tests do not wait seconds.
    init(retryDelaysMilliseconds: [Int64] = [200, 400], receipts: Bool = false) throws {
        cluster = try KafkaMockCluster(brokers: 3)
        loops = try EventLoopGroup()
        group = "callpush-test-\(UUID().uuidString.prefix(8))"
        var configuration = WorkerConfiguration()
        configuration.dispatcher.routing.retry.tiers = retryDelaysMilliseconds.enumerated().map { index, delay in
            .init(topic: "calls.retry.t\(index)", delay: .milliseconds(delay))
        }
        configuration.dispatcher.routing.retry.maximumAttempts = retryDelaysMilliseconds.count + 1
        configuration.dispatcher.routing.emitReceipts = receipts
        configuration.dispatcher.produceRetryInitial = .milliseconds(50)
        configuration.consumer = Self.consumerConfiguration(cluster.bootstrapServers, group: group)
        configuration.producer.bootstrapServers = cluster.bootstrapServers
        configuration.producer.messageTimeout = .seconds(20)
        self.configuration = configuration
        for topic in configuration.allTopics + ["calls.outcomes"] {
            try cluster.createTopic(topic, partitions: Self.partitions)
        }
    }

    /// The embedded default's fast group membership and offset storage, on this cluster and group.
    static func consumerConfiguration(_ bootstrap: String, group: String) -> KafkaConsumerConfiguration {
        var consumer = EmbeddedPipelineConfiguration.demoWorker.consumer
        consumer.bootstrapServers = bootstrap
        consumer.groupID = group
        consumer.clientID = "worker-\(UUID().uuidString.prefix(8))"
        consumer.closeDrainTimeout = .seconds(10)
        return consumer
    }

    func makeWorker(
        sender: any PushSender, registry: MetricsRegistry = MetricsRegistry(), log: RecordingLogSink = RecordingLogSink(),
        configure: (inout WorkerConfiguration) -> Void = { _ in }
    ) throws -> WorkerService {
        var configuration = configuration
        configure(&configuration)
        let worker = try WorkerService(
            configuration: configuration, sender: sender, timers: loops, registry: registry,
            logger: Logger(label: "worker-test", level: .warning, sink: log)
        )
        try worker.start()
        return worker
    }

    /// Produces event JSON lines to `calls`, keyed by call id, each with `headers`, and waits for every delivery report.
    func produce(_ events: [(callID: String, json: String)], topic: String = "calls", headers: [KafkaHeader] = []) async throws {
        var producerConfiguration = KafkaProducerConfiguration()
        producerConfiguration.bootstrapServers = cluster.bootstrapServers
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: .disabled)
        for event in events {
            _ = try await producer.send(KafkaProducerRecord(
                topic: topic, key: Array(event.callID.utf8), value: Array(event.json.utf8), headers: headers))
        }
        await producer.close()
    }

    /// Reads every record of `topics` from the beginning until `count` arrived or `timeout` passed.
    func read(_ topics: [String], atLeast count: Int, timeout: Duration = .seconds(30)) async throws -> [KafkaMessage] {
        try await Self.read(bootstrap: cluster.bootstrapServers, topics, atLeast: count, timeout: timeout)
    }

    /// Reads every record of `topics` on the cluster at `bootstrap`, from the beginning, until `count` arrived or
    /// `timeout` passed.
    static func read(bootstrap: String, _ topics: [String], atLeast count: Int, timeout: Duration = .seconds(30))
        async throws -> [KafkaMessage]
    {
        let collector = Collector()
        var configuration = consumerConfiguration(bootstrap, group: "reader-\(UUID().uuidString.prefix(8))")
        configuration.autoOffsetReset = .earliest
        let consumer = try KafkaConsumer(topics: topics, configuration: configuration, delegate: collector, logger: .disabled)
        await Eventually.waitUntil(timeout: timeout) { collector.messages.count >= count }
        await consumer.abandon()
        return collector.messages
    }

    /// `callpush_outcomes_total` per outcome from a registry's exposition.
    static func outcomes(_ registry: MetricsRegistry) -> [Outcome: Int] {
        let text = registry.exposition()
        var result: [Outcome: Int] = [:]
        for outcome in Outcome.allCases {
            if let value = ExpositionSeries.value("callpush_outcomes_total{outcome=\"\(outcome.rawValue)\"}", in: text) {
                result[outcome] = Int(value)
            }
        }
        return result
    }

    final class Collector: KafkaConsumerDelegate {
        private let state = Mutex<[KafkaMessage]>([])
        func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) {
            state.withLock { $0.append(message) }
            consumer.complete(message)
        }
        var messages: [KafkaMessage] { state.withLock { $0 } }
    }
}

extension Dictionary where Key == Outcome, Value == Int {
    var total: Int { values.reduce(0, +) }
}
