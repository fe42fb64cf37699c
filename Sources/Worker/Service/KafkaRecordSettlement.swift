import Kafka

/// Consumed messages' way back to their consumer: an outcome completes a message (its offset becomes storable), a
/// give-back leaves it unfinished.
final class KafkaRecordSettlement: RecordSettlement {
    private let consumer: KafkaConsumer

    init(consumer: KafkaConsumer) {
        self.consumer = consumer
    }

    func done(_ record: KafkaMessage, _ outcome: Outcome) { consumer.complete(record) }
    func giveBack(_ record: KafkaMessage) { consumer.giveBack(record) }
}
