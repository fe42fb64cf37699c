import Foundation
import Synchronization
@testable import Telemetry
import TestSupport

@testable import Kafka

/// Shared helpers for the Kafka tests.
enum KafkaTestSupport {
    static func uniqueName(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8))"
    }

    /// A one-broker mock cluster with a new topic of `partitions` partitions, and a new group id; the caller closes it.
    static func groupCluster(partitions: Int32) throws -> (cluster: KafkaMockCluster, topic: String, group: String) {
        let cluster = try KafkaMockCluster(brokers: 1)
        let topic = uniqueName("calls")
        try cluster.createTopic(topic, partitions: Int(partitions))
        return (cluster, topic, uniqueName("g"))
    }

    /// A one-broker mock cluster with a new topic of `partitions` partitions and a producer of it (with
    /// `reportSlots` and spare ones instead of its default report slots); the caller closes the cluster.
    static func producerCluster(partitions: Int, reportSlots: (first: Int, spare: Int)? = nil) throws
        -> (cluster: KafkaMockCluster, topic: String, producer: KafkaProducer)
    {
        let cluster = try KafkaMockCluster(brokers: 1)
        let topic = uniqueName("receipts")
        try cluster.createTopic(topic, partitions: partitions)
        let configuration = producerConfiguration(cluster)
        guard let reportSlots else { return (cluster, topic, try KafkaProducer(configuration: configuration, logger: logger)) }
        return (cluster, topic, try KafkaProducer(configuration: configuration, logger: logger, metrics: MetricsRegistry(),
                                                  reportSlots: reportSlots.first, spareReportSlots: reportSlots.spare))
    }

    static func consumerConfiguration(_ cluster: KafkaMockCluster, group: String) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration()
        configuration.bootstrapServers = cluster.bootstrapServers
        configuration.groupID = group
        configuration.clientID = uniqueName("consumer")
        configuration.sessionTimeout = .seconds(6)
        configuration.autoCommitInterval = .milliseconds(200)
        configuration.statisticsInterval = .seconds(1)
        configuration.revokeDrainTimeout = .seconds(2)
        configuration.closeDrainTimeout = .seconds(5)
        configuration.offsetStoreInterval = .milliseconds(20)
        return configuration
    }

    static func producerConfiguration(_ cluster: KafkaMockCluster) -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration()
        configuration.bootstrapServers = cluster.bootstrapServers
        configuration.clientID = uniqueName("producer")
        configuration.messageTimeout = .seconds(20)
        return configuration
    }

    /// Whether `consumer` owns partitions 0..<`partitions` of `topic` and a commit of each has succeeded up to
    /// `offset` (the next offset to read), as the group's next owner of the partition would start reading.
    static func hasCommitted(_ consumer: KafkaConsumer, topic: String, partitions: Int32, upTo offset: Int64) -> Bool {
        consumer.state.withLock { state in
            (0..<partitions).allSatisfy { partition in
                (state.partitions[KafkaTopicPartition(topic: topic, partition: partition)]?.lastCommit ?? -1) >= offset
            }
        }
    }

    /// The offsets of the last successful commit of each partition `consumer` owns, for failure messages.
    static func lastCommits(_ consumer: KafkaConsumer) -> [String: Int64] {
        consumer.state.withLock { state in
            Dictionary(uniqueKeysWithValues: state.partitions.map { ($0.key.description, $0.value.lastCommit ?? -1) })
        }
    }

    static var logger: Logger {
        ProcessInfo.processInfo.environment["KAFKA_TEST_LOG"] != nil
            ? Logger(label: "kafka-test", level: .debug, sink: FileDescriptorLogSink(fileDescriptor: 2))
            : Logger(label: "kafka-test", level: .info, sink: RecordingLogSink())
    }

    /// Enqueues one record; `false` when the local queue is full.
    static func enqueue(_ producer: KafkaProducer, _ record: KafkaProducerRecord, _ failures: Tally) throws(KafkaError) -> Bool {
        do {
            try producer.produce(record) { result in
                if case .failure = result { failures.add() }
            }
            return true
        } catch {
            if error.code == KafkaError.Code.queueFull { return false }
            throw error
        }
    }

    /// Produces `count` records `"<index>"` round-robin over `partitions` partitions and waits for all reports.
    static func produce(
        _ cluster: KafkaMockCluster,
        topic: String,
        count: Int,
        partitions: Int32,
        startingAt start: Int = 0
    ) async throws -> Int {
        let producer = try KafkaProducer(configuration: producerConfiguration(cluster), logger: logger)
        let failures = Tally()
        for index in start..<(start + count) {
            let record = KafkaProducerRecord(
                topic: topic,
                partition: Int32(index % Int(partitions)),
                key: Array("k\(index)".utf8),
                value: Array(String(index).utf8)
            )
            while !(try enqueue(producer, record, failures)) {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        _ = await producer.flush(timeout: .seconds(30))
        await producer.close()
        return failures.value
    }
}

/// A delegate that records everything and completes each message through a pluggable strategy.
final class RecordingDelegate: KafkaConsumerDelegate {
    struct Snapshot {
        var received: [KafkaMessage] = []
        var assigned: [[KafkaTopicPartition]] = []
        var revoked: [[KafkaTopicPartition]] = []
        var errors: [KafkaError] = []
        /// What is assigned now: each assign adds, each revoke removes (eager revokes everything before it assigns).
        var current: Set<KafkaTopicPartition> = []
    }

    let snapshot = Mutex(Snapshot())
    let onMessage: @Sendable (KafkaConsumer, KafkaMessage) -> Void
    let keepMessages: Bool
    let count = Atomic<Int>(0)

    init(keepMessages: Bool = true, onMessage: @escaping @Sendable (KafkaConsumer, KafkaMessage) -> Void) {
        self.keepMessages = keepMessages
        self.onMessage = onMessage
    }

    /// Completes every message immediately, on the poll thread.
    static func completingImmediately(keepMessages: Bool = true) -> RecordingDelegate {
        RecordingDelegate(keepMessages: keepMessages) { consumer, message in consumer.complete(message) }
    }

    func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) {
        if keepMessages { snapshot.withLock { $0.received.append(message) } }
        count.add(1, ordering: .relaxed)
        onMessage(consumer, message)
    }

    func consumer(_ consumer: KafkaConsumer, didAssign partitions: [KafkaTopicPartition]) {
        snapshot.withLock {
            $0.assigned.append(partitions)
            $0.current.formUnion(partitions)
        }
    }

    func consumer(_ consumer: KafkaConsumer, didRevoke partitions: [KafkaTopicPartition]) {
        snapshot.withLock {
            $0.revoked.append(partitions)
            $0.current.subtract(partitions)
        }
        revokeHook.withLock { $0 }?(consumer)
    }

    /// Called on the poll thread at each revoke, after it is recorded (e.g. to complete held-back messages then).
    var onRevoke: (@Sendable (KafkaConsumer) -> Void)? {
        get { revokeHook.withLock { $0 } }
        set { revokeHook.withLock { $0 = newValue } }
    }
    private let revokeHook = Mutex<(@Sendable (KafkaConsumer) -> Void)?>(nil)

    func consumer(_ consumer: KafkaConsumer, didFail error: KafkaError) {
        snapshot.withLock { $0.errors.append(error) }
    }

    var received: [KafkaMessage] { snapshot.withLock { $0.received } }
    var receivedCount: Int { count.load(ordering: .relaxed) }
    var assignedPartitions: Set<KafkaTopicPartition> { snapshot.withLock { $0.current } }
}

