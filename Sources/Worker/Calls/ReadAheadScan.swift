/// A part of a calls partition the read-ahead (``ReadAheadGate``) asks to scan for stop events: offsets
/// `from ..< to` of partition `lane` (`to` nil: up to the partition's high watermark when the scan starts reading),
/// for the lane's assignment `generation`.
struct ReadAheadScan: Sendable, Hashable {
    enum Kind: String, CaseIterable, Sendable {
        /// The backlog a newly assigned partition holds, `[its first record, the high watermark at assignment)`.
        case backlog
        /// What lies before the lane's own reading, from a held retry-tier record's first hop on.
        case history
    }

    var kind: Kind
    var lane: Int32
    var from: Int64
    var to: Int64?
    var generation: UInt64
}
