import Synchronization
import Testing

@testable import Kafka

@Suite(.timeLimit(.minutes(2))) struct KafkaProducerPrepareTests {
    /// A prepared topic's partitions are known before its first record: a record to a partition it does not have
    /// is refused at once. A topic first named by a record is not known yet (librdkafka queues the record until it
    /// learns of the topic, which can take up to a second), so the same record is accepted for now and fails later.
    @Test func preparedTopicIsKnownBeforeItsFirstRecord() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let prepared = KafkaTestSupport.uniqueName("prepared")
        let unprepared = KafkaTestSupport.uniqueName("unprepared")
        let missing = KafkaTestSupport.uniqueName("missing")
        try cluster.createTopic(prepared, partitions: 4)
        let producer = try KafkaProducer(configuration: KafkaTestSupport.producerConfiguration(cluster), logger: KafkaTestSupport.logger)

        let counts = try producer.prepare(topics: [prepared, missing])
        #expect(counts == [prepared: 4], "the missing topic has no count")
        // A topic that must exist is checked in the same request. (Another name: the kept local state of `missing`
        // makes librdkafka ask about it, and the mock cluster creates topics it is asked about.)
        let absent = KafkaTestSupport.uniqueName("absent")
        let required = #expect(throws: KafkaError.self) { try producer.prepare(topics: [prepared, absent], requiring: [absent]) }
        #expect(required?.code == .unknownTopicOrPartition)
        // Created after the metadata request, so not in librdkafka's cache either.
        try cluster.createTopic(unprepared, partitions: 4)
        let refused = #expect(throws: KafkaError.self) {
            try producer.produce(KafkaProducerRecord(topic: prepared, partition: 7, value: [1])) { _ in }
        }
        #expect(refused?.code == .unknownPartition)
        let late = Mutex<KafkaError?>(nil)
        try producer.produce(KafkaProducerRecord(topic: unprepared, partition: 7, value: [1])) { result in
            if case .failure(let error) = result { late.withLock { $0 = error } }
        }
        #expect(await producer.flush(timeout: .seconds(10)))
        #expect(late.withLock { $0 }?.code == .unknownPartition)

        let delivered = try await producer.send(KafkaProducerRecord(topic: prepared, partition: 3, value: [2]))
        #expect(delivered.topic == prepared && delivered.partition == 3)
        await producer.close(timeout: .seconds(1))
        let closed = #expect(throws: KafkaError.self) { try producer.prepare(topics: [prepared]) }
        #expect(closed?.code == KafkaError.closed().code)
    }
}
