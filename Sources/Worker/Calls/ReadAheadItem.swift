/// An event as the ``ReadAheadGate`` sees it: where its record was read, and whether it would ring. The dispatcher's
/// in-flight event is one, so the gate holds and lets go the very object the dispatcher keeps.
protocol ReadAheadItem: Sendable {
    /// The record's partition number: the gate's lane.
    var lane: Int32 { get }
    var offset: Int64 { get }
    /// The record comes from the calls topic (its offsets measure the read-ahead).
    var isCallsTopic: Bool { get }
    /// The record's partition high watermark at assignment, if known.
    var highWatermark: Int64? { get }
    /// The event would make a phone ring.
    var isIncoming: Bool { get }
    /// For a retry-tier incoming record, the calls-topic offset of its first hop in this lane, if known (the gate
    /// reads it only for those; it is read under the gate's lock, so it should be stored, not worked out).
    var origin: Int64? { get }
}
