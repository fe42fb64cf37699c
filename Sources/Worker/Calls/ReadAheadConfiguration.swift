/// Limits of reading ahead through a newly assigned partition's backlog before its incoming calls ring.
struct ReadAheadConfiguration: Sendable, Hashable {
    /// Hold back nothing (every event passes at once). Default: false.
    var disabled = false
    /// Events one lane holds before it lets them go. Keep it below the consumer's per-partition in-flight limit,
    /// which would otherwise pause the partition the read-ahead is waiting on. Default: 500.
    var maxHeldPerPartition = 500
    /// Events all lanes hold together before they let them go. Default: 5000.
    var maxHeld = 5_000
    /// How long a lane holding events waits for its calls partition to deliver anything before it gives up reading
    /// ahead and lets them go. Reading ahead normally ends in milliseconds (when the backlog is read); this bounds
    /// the delay when it cannot (a stalled broker, a paused partition). Default: 5 s.
    var timeout: Duration = .seconds(5)
    /// Scan a newly assigned partition's backlog for stop events beside the consumer (when the worker has a scanner),
    /// so the limits above do not decide whether a call in a long backlog rings after its hang-up. Default: true.
    var scansBacklog = true
    /// Records before a lane's first record that a history scan reads at most: a retry whose first hop lies further
    /// back (a rewritten or forged `x-original-offset`, a retry older than any ring) waits for a scan from this far
    /// back only, not from the start of the log. Default: 1 000 000.
    var historyReach: Int64 = 1_000_000

    init() {}
}
