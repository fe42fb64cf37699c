/// Reads parts of a newly assigned calls partition beside the consumer, for the read-ahead (``ReadAheadGate``): its
/// backlog, and the history before it that held retry records need, so the stop events in them are known before any
/// of the partition's incoming calls rings.
protocol BacklogScanner: Sendable {
    /// Hands the values of records `from ..< to` of `topic`'s `partition` to `each`, in offset order (`each` returns
    /// false to stop), then calls `finished` once. Both run on a thread of the scanner's. `to` nil: up to the
    /// partition's high watermark when the scan starts reading.
    func scan(
        topic: String, partition: Int32, from: Int64, to: Int64?,
        each: @escaping @Sendable (_ value: [UInt8]) -> Bool,
        finished: @escaping @Sendable (BacklogScanOutcome) -> Void
    )
}
