/// Limits of the worker's memory of ended calls (so a late incoming event after its hang-up is cancelled).
struct CallMemoryConfiguration: Sendable, Hashable {
    /// How many ended call ids to remember. Default: 100000.
    var endedCallCapacity: Int = 100_000
    /// How long to remember an ended call id (longer than the longest retry tier plus its ring timeout).
    /// Default: 10 minutes.
    var endedCallRetention: Duration = .seconds(600)

    init() {}
}
