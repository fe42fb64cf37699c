/// Limits of the worker's memory of ended calls (so a late incoming event after its hang-up is cancelled).
package struct CallMemoryConfiguration: Sendable, Hashable {
    /// How many ended call ids to remember (34 bytes each, allocated in full at the first ended call). A worker
    /// handling more hang-ups than this in ``endedCallRetention`` forgets them sooner (its
    /// `callpush_ended_calls_reach_seconds` falls). Default: 100000.
    package var endedCallCapacity: Int = 100_000
    /// How long to remember an ended call id (longer than the longest retry tier plus its ring timeout).
    /// Default: 10 minutes.
    var endedCallRetention: Duration = .seconds(600)

    init() {}
}
