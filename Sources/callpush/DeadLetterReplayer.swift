import Kafka
import Synchronization
import Worker

/// Consumes dead-lettered events and re-produces each valid one to the calls topic with its original key,
/// completing the DLQ record only after the new record is acknowledged.
final class DeadLetterReplayer: KafkaConsumerDelegate {
    typealias Send = @Sendable (KafkaProducerRecord, KafkaProducer, ProduceTally, (@Sendable () -> Void)?) async -> Void

    private let producer: KafkaProducer
    private let topic: String
    private let tally: ProduceTally
    private let send: Send
    private let activity = Mutex<ContinuousClock.Instant?>(nil)
    private let decoder = CallEventDecoder()

    init(producer: KafkaProducer, topic: String, tally: ProduceTally, send: @escaping Send) {
        self.producer = producer
        self.topic = topic
        self.tally = tally
        self.send = send
    }

    /// When the last record arrived, or the partitions were assigned; nil before the group is joined.
    var lastActivity: ContinuousClock.Instant? { activity.withLock { $0 } }

    func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) {
        activity.withLock { $0 = .now }
        let origin = "\(message.topic)/\(message.partition)/\(message.offset)"
        guard (try? decoder.decode(message.value)) != nil else {
            CommandLineTool.printError("\(origin): not a valid event; skipped")
            tally.fail()
            consumer.complete(message)
            return
        }
        let record = KafkaProducerRecord(
            topic: topic, key: message.key, value: message.value,
            headers: [KafkaHeader(name: "x-replayed-from", string: origin)]
        )
        let (producer, tally, send) = (producer, tally, send)
        Task { await send(record, producer, tally) { consumer.complete(message) } }
    }

    func consumer(_ consumer: KafkaConsumer, didAssign partitions: [KafkaTopicPartition]) {
        activity.withLock { $0 = .now }
    }
}
