import Kafka

/// A consumed message's way back to its consumer: its outcome completes it (its offset becomes storable), a give-back
/// leaves it unfinished.
final class KafkaRecordSettlement: RecordSettlement {
    private let consumer: KafkaConsumer
    private let message: KafkaMessage

    init(consumer: KafkaConsumer, message: KafkaMessage) {
        self.consumer = consumer
        self.message = message
    }

    func done(_ outcome: Outcome) { consumer.complete(message) }
    func giveBack() { consumer.giveBack(message) }
}
