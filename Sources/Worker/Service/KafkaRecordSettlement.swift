import Kafka

/// Consumed messages' way back to their consumer: an outcome completes a message (its offset becomes storable), a
/// give-back leaves it unfinished. Outcomes are settled on the poll thread, a turn's worth under one consumer lock.
final class KafkaRecordSettlement: HomeThreadSettlement {
    private let consumer: KafkaConsumer

    init(consumer: KafkaConsumer) {
        self.consumer = consumer
    }

    func done(_ record: KafkaMessage, _ outcome: Outcome) { consumer.complete(record) }
    func done(contentsOf records: [KafkaMessage]) { consumer.complete(contentsOf: records) }
    func completionsWaiting() { consumer.wakeForCompletions() }
    func giveBack(_ record: KafkaMessage) { consumer.giveBack(record) }
}
