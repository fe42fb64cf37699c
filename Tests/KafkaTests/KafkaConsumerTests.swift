import Foundation
import Synchronization
import TestSupport
@testable import Telemetry
import Testing

@testable import Kafka

@Suite(.timeLimit(.minutes(2))) struct KafkaConsumerTests {
    /// No key, an empty key and a key come back as produced: a null key is not an empty one.
    @Test func aMissingKeyAndAnEmptyKeyStayApart() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls")
        try cluster.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: KafkaTestSupport.producerConfiguration(cluster),
                                         logger: KafkaTestSupport.logger)
        let keys: [[UInt8]?] = [nil, [], [1, 2]]
        for (index, key) in keys.enumerated() {
            _ = try await producer.send(KafkaProducerRecord(topic: topic, key: key, value: [UInt8(index)]))
        }
        await producer.close()
        let delegate = RecordingDelegate.completingImmediately()
        let consumer = try KafkaConsumer(
            topics: [topic],
            configuration: KafkaTestSupport.consumerConfiguration(cluster, group: KafkaTestSupport.uniqueName("g")),
            delegate: delegate, logger: KafkaTestSupport.logger)
        #expect(await Eventually.waitUntil(timeout: .seconds(20)) { delegate.receivedCount >= keys.count })
        #expect(delegate.received.sorted { $0.offset < $1.offset }.map(\.key) == keys)
        await consumer.close()
    }

    @Test func producesAndConsumesWithHeadersAndMetrics() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls")
        try cluster.createTopic(topic, partitions: 4)
        let registry = MetricsRegistry()

        let producer = try KafkaProducer(
            configuration: KafkaTestSupport.producerConfiguration(cluster),
            logger: KafkaTestSupport.logger
        )
        let report = try await producer.send(
            KafkaProducerRecord(
                topic: topic,
                key: Array("call-1".utf8),
                value: Array("{\"a\":1}".utf8),
                headers: [KafkaHeader(name: "x-attempt", string: "2"), KafkaHeader(name: "x-bin", value: [0, 255])]
            )
        )
        #expect(report.topic == topic)
        #expect(report.offset == 0)
        for index in 0..<99 {
            _ = try await producer.send(KafkaProducerRecord(topic: topic, key: Array("k\(index)".utf8), value: [1]))
        }
        await producer.close()

        let delegate = RecordingDelegate.completingImmediately()
        let consumer = try KafkaConsumer(
            topics: [topic],
            configuration: KafkaTestSupport.consumerConfiguration(cluster, group: KafkaTestSupport.uniqueName("g")),
            delegate: delegate,
            logger: KafkaTestSupport.logger,
            metrics: registry
        )
        let done = await Eventually.waitUntil(timeout: .seconds(20)) { delegate.receivedCount >= 100 }
        #expect(done)
        let first = try #require(delegate.received.first { $0.key == Array("call-1".utf8) })
        #expect(first.value == Array("{\"a\":1}".utf8))
        #expect(first.header("x-attempt") == Array("2".utf8))
        #expect(first.header("x-bin") == [0, 255])
        #expect(first.timestampMilliseconds != nil)
        #expect(Set(consumer.assignment).count == 4)
        // Statistics arrive every second: the lag gauge reaches 0 once offsets are committed.
        let lagged = await Eventually.waitUntil(timeout: .seconds(8)) {
            let text = registry.exposition()
            return text.contains("callpush_kafka_consumer_lag{partition=\"0\",topic=\"\(topic)\"} 0")
                && text.contains("callpush_kafka_broker_rtt_seconds{broker=")
        }
        #expect(lagged, "\(registry.exposition())")
        let exposition = registry.exposition()
        #expect(exposition.contains("callpush_kafka_rebalances_total 1"))
        // librdkafka's view of the group: joined, its 4 partitions assigned.
        #expect(exposition.contains("callpush_kafka_group_join_state{state=\"steady\"} 1"), "\(exposition)")
        #expect(exposition.contains("callpush_kafka_group_assignment_size 4"))
        #expect(exposition.contains("callpush_kafka_group_rebalance_age_seconds "))
        await consumer.close()
        let revokes = delegate.snapshot.withLock { $0.revoked.count }
        #expect(revokes == 1)
    }

    /// Once closed, a producer and a consumer are released at once: their close timeouts' watchdogs (25 s and 22 s
    /// here) used to keep them — buffers, metrics, the registry — alive until they fired.
    @Test func closedProducerAndConsumerAreReleased() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls")
        try cluster.createTopic(topic, partitions: 2)
        let producerReference: WeakReference<KafkaProducer>
        let consumerReference: WeakReference<KafkaConsumer>
        do {
            let producer = try KafkaProducer(configuration: KafkaTestSupport.producerConfiguration(cluster), logger: KafkaTestSupport.logger)
            producerReference = WeakReference(producer)
            for index in 0..<10 { _ = try await producer.send(KafkaProducerRecord(topic: topic, value: [UInt8(index)])) }
            await producer.close()
            let delegate = RecordingDelegate.completingImmediately(keepMessages: false)
            let consumer = try KafkaConsumer(
                topics: [topic],
                configuration: KafkaTestSupport.consumerConfiguration(cluster, group: KafkaTestSupport.uniqueName("g")),
                delegate: delegate, logger: KafkaTestSupport.logger)
            consumerReference = WeakReference(consumer)
            #expect(await Eventually.waitUntil(timeout: .seconds(20)) { delegate.receivedCount >= 10 })
            await consumer.close()
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(10)) {
            producerReference.object == nil && consumerReference.object == nil
        }, "producer released \(producerReference.object == nil), consumer \(consumerReference.object == nil)")
    }
}
