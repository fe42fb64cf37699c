import Kafka

/// A ``RecordSettlement`` made of two closures (tests, and callers without a settlement object of their own).
final class ClosureSettlement: RecordSettlement {
    private let onDone: @Sendable (KafkaMessage, Outcome) -> Void
    private let onGiveBack: @Sendable (KafkaMessage) -> Void

    init(
        done: @escaping @Sendable (KafkaMessage, Outcome) -> Void,
        giveBack: @escaping @Sendable (KafkaMessage) -> Void = { _ in }
    ) {
        onDone = done
        onGiveBack = giveBack
    }

    func done(_ record: KafkaMessage, _ outcome: Outcome) { onDone(record, outcome) }
    func giveBack(_ record: KafkaMessage) { onGiveBack(record) }
}
