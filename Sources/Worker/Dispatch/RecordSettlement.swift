import Kafka

/// How the records handed to the dispatcher leave it: ``done(_:_:)`` with a record's final outcome (its offset may
/// then be stored), or ``giveBack(_:)`` unprocessed (it stays unfinished and is read again by the partition's next
/// owner; nothing waits for it). Exactly one of the two is called once per record — for a ``HomeThreadSettlement``,
/// `done` of an event the dispatcher admitted comes as part of ``HomeThreadSettlement/done(contentsOf:)`` instead.
/// One object serves a whole batch (the consumer's: ``KafkaRecordSettlement``), and each event keeps a reference to it.
protocol RecordSettlement: AnyObject, Sendable {
    func done(_ record: KafkaMessage, _ outcome: Outcome)
    func giveBack(_ record: KafkaMessage)
}
