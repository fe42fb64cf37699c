/// How one consumed record leaves the dispatcher: ``done(_:)`` with its final outcome (its offset may then be
/// stored), or ``giveBack()`` unprocessed. Exactly one of the two is called, once. An object rather than two closures:
/// the consumer makes one per record (one allocation, one reference to carry).
protocol RecordSettlement: AnyObject, Sendable {
    func done(_ outcome: Outcome)
    func giveBack()
}
