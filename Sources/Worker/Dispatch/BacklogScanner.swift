/// Reads a newly assigned calls partition's backlog beside the consumer, for the read-ahead (``ReadAheadGate``): the
/// stop events in it are known before any of its incoming calls rings.
protocol BacklogScanner: Sendable {
    /// Hands the values of records `from ..< to` of `topic`'s `partition` to `each`, in offset order (`each` returns
    /// false to stop), then calls `finished` once. Both run on a thread of the scanner's.
    func scan(
        topic: String, partition: Int32, from: Int64, to: Int64,
        each: @escaping @Sendable (_ value: [UInt8]) -> Bool,
        finished: @escaping @Sendable (BacklogScanOutcome) -> Void
    )
}
