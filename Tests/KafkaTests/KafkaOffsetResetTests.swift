import Telemetry
import TestSupport
import Testing

@testable import Kafka

@Suite(.timeLimit(.minutes(2))) struct KafkaOffsetResetTests {
    /// Records deleted before the group read them (librdkafka's mock broker keeps about 5 MB per partition, as a real
    /// one keeps what its retention allows) are skipped when the group comes back: librdkafka resets the partition
    /// to its earliest offset and only logs it. The consumer makes that visible: an error line and
    /// `callpush_kafka_offset_resets_total{topic}`; a reset because a group has no offset yet counts nothing.
    @Test func recordsDeletedBeforeTheGroupReadThemAreCountedAsAReset() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls")
        let group = KafkaTestSupport.uniqueName("group")
        try cluster.createTopic(topic, partitions: 1)
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 10, partitions: 1) == 0)

        let registry = MetricsRegistry()
        let first = RecordingDelegate.completingImmediately()
        let consumer = try KafkaConsumer(
            topics: [topic], configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
            delegate: first, logger: KafkaTestSupport.logger, metrics: registry)
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { first.receivedCount == 10 })
        await consumer.close()
        #expect(registry.exposition().contains("\(KafkaConsumerMetrics.offsetResetsName){topic=\"\(topic)\"} 0"),
                "registered at start; a new group's start is no reset")

        // 7 MB more: the mock broker drops the oldest message sets, the group's offset 10 among them.
        var uncompressed = KafkaTestSupport.producerConfiguration(cluster)
        uncompressed.compression = "none"
        let producer = try KafkaProducer(configuration: uncompressed, logger: KafkaTestSupport.logger)
        try producer.prepare(topics: [topic])
        for index in 0..<700 {
            _ = try await producer.send(KafkaProducerRecord(topic: topic, partition: 0, value: Array(repeating: UInt8(index % 256), count: 10_000)))
        }
        await producer.close()

        let sink = RecordingLogSink()
        let second = RecordingDelegate.completingImmediately(keepMessages: true)
        let resumed = try KafkaConsumer(
            topics: [topic], configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
            delegate: second, logger: Logger(label: "kafka-test", level: .info, sink: sink), metrics: registry)
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { second.receivedCount > 0 })
        await resumed.close()
        let skippedTo = try #require(second.received.first?.offset)
        #expect(skippedTo > 10, "records 10…\(skippedTo - 1) were deleted before the group read them")
        #expect(registry.exposition().contains("\(KafkaConsumerMetrics.offsetResetsName){topic=\"\(topic)\"} 1"))
        #expect(sink.lines.contains { $0.contains("records skipped") && $0.contains("Offset out of range") }, "\(sink.lines)")
    }
}
