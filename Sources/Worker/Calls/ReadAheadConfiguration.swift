/// Limits of reading ahead through a newly assigned partition's backlog before its incoming calls ring.
public struct ReadAheadConfiguration: Sendable, Hashable {
    /// Hold back nothing (every event passes at once). Default: false.
    public var disabled = false
    /// Events one lane holds before it lets them go. Keep it below the consumer's per-partition in-flight limit,
    /// which would otherwise pause the partition the read-ahead is waiting on. Default: 500.
    public var maxHeldPerPartition = 500
    /// Events all lanes hold together before they let them go. Default: 5000.
    public var maxHeld = 5_000
    /// Longest time a lane holds an event before it gives up reading ahead. Default: 1 s.
    public var timeout: Duration = .seconds(1)

    public init() {}
}
