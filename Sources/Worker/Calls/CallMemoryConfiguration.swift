/// Limits of the worker's memory of ended calls (so a late incoming event after its hang-up is cancelled).
public struct CallMemoryConfiguration: Sendable, Hashable {
    /// How many ended call ids to remember. Default: 100000.
    public var endedCallCapacity: Int = 100_000
    /// How long to remember an ended call id, in milliseconds (longer than the longest retry tier plus its
    /// ring timeout). Default: 600000 (10 minutes).
    public var endedCallRetentionMilliseconds: Int64 = 600_000

    public init() {}
}
