/// One record the consumer handed to the dispatcher, with the two ways it can leave (its ``settlement``): `done` with
/// its final outcome (its offset may then be stored), or `giveBack` unprocessed (it stays unfinished and is read again
/// by the partition's next owner; nothing waits for it).
struct ConsumedRecord: Sendable {
    let record: InboundRecord
    let settlement: any RecordSettlement

    init(_ record: InboundRecord, settlement: any RecordSettlement) {
        self.record = record
        self.settlement = settlement
    }

    init(_ record: InboundRecord, done: @escaping @Sendable (Outcome) -> Void, giveBack: @escaping @Sendable () -> Void = {}) {
        self.init(record, settlement: ClosureSettlement(done: done, giveBack: giveBack))
    }
}
