import Kafka

/// One record the consumer handed to the dispatcher, with the two ways it can leave (its ``settlement``): `done` with
/// its final outcome (its offset may then be stored), or `giveBack` unprocessed (it stays unfinished and is read again
/// by the partition's next owner; nothing waits for it).
struct ConsumedRecord: Sendable {
    let record: KafkaMessage
    let settlement: any RecordSettlement

    init(_ record: KafkaMessage, settlement: any RecordSettlement) {
        self.record = record
        self.settlement = settlement
    }

    init(_ record: KafkaMessage, done: @escaping @Sendable (Outcome) -> Void, giveBack: @escaping @Sendable () -> Void = {}) {
        self.init(record, settlement: ClosureSettlement(done: done, giveBack: giveBack))
    }
}
