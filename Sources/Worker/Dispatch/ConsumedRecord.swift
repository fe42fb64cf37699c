/// One record the consumer handed to the dispatcher, with the two ways it can leave: `done` with its final outcome
/// (its offset may then be stored), or `giveBack` unprocessed (it stays unfinished and is read again by the
/// partition's next owner; nothing waits for it).
struct ConsumedRecord: Sendable {
    let record: InboundRecord
    let done: @Sendable (Outcome) -> Void
    let giveBack: @Sendable () -> Void

    init(_ record: InboundRecord, done: @escaping @Sendable (Outcome) -> Void, giveBack: @escaping @Sendable () -> Void = {}) {
        self.record = record
        self.done = done
        self.giveBack = giveBack
    }
}
