/// An event an ``InFlightLedger`` tracks, and its own node in the ledger's list of ended events, so that ending one
/// allocates nothing: the conformer keeps the link and the ended flag in two atomics of its own.
protocol InFlightLedgerItem: AnyObject, Sendable {
    /// Its ticket (``InFlightLedger/begin(count:at:)``).
    var ticket: UInt64 { get }
    /// The next (older) ended item on the ledger's list (an atomic load, relaxed: the list's head orders it).
    var ledgerNext: Unmanaged<Self>? { get }
    /// Sets ``ledgerNext`` before the item is pushed (an atomic store, relaxed).
    func setLedgerNext(_ next: Unmanaged<Self>?)
    /// Marks the item ended: true the first time only (an atomic exchange).
    func markLedgerEnded() -> Bool
}
