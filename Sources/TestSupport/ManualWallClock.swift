import Synchronization
package import Telemetry

/// A wall clock that only moves when told to, and the monotonic clock beside it; for tests. Thread-safe.
/// ``advance(by:)`` moves both (the monotonic one forward only); ``step(by:)`` moves the wall clock alone, as NTP does.
/// As a ``JobScheduler`` it runs a job when ``advance(by:)`` reaches the job's time, on the advancing thread.
package final class ManualWallClock: WallClock, MonotonicClock, JobScheduler {
    private let current: Atomic<Int64>
    private let uptime = Atomic<UInt64>(1_000_000_000)
    /// Jobs not due yet: when (monotonic nanoseconds), in the order they were given.
    private let jobs = Mutex<[(due: UInt64, job: @Sendable () -> Void)]>([])

    /// - Parameter start: the time it shows. Default: 2025-11-30T08:00:00Z.
    package init(_ start: WallTime = WallTime(nanosecondsSinceEpoch: 1_764_489_600_000_000_000)) {
        current = Atomic(start.nanosecondsSinceEpoch)
    }

    package convenience init(millisecondsSinceEpoch: Int64) {
        self.init(WallTime(millisecondsSinceEpoch: millisecondsSinceEpoch))
    }

    package func now() -> WallTime { WallTime(nanosecondsSinceEpoch: current.load(ordering: .relaxed)) }

    package func uptimeNanoseconds() -> UInt64 { uptime.load(ordering: .relaxed) }

    /// Lets `duration` pass: the wall clock moves by it (back, for a negative one), the monotonic clock forward;
    /// then the jobs that are due run, earliest first (also those a job gives that are due by then).
    package func advance(by duration: Duration) {
        step(by: duration)
        let nanoseconds = Self.nanoseconds(duration)
        if nanoseconds > 0 { uptime.add(UInt64(nanoseconds), ordering: .relaxed) }
        while let job = nextDueJob() { job() }
    }

    package func execute(after delay: Duration, _ job: @escaping @Sendable () -> Void) {
        let due = uptimeNanoseconds() &+ UInt64(max(0, Self.nanoseconds(delay)))
        jobs.withLock { $0.append((due, job)) }
    }

    /// Jobs given and not run yet.
    package var scheduledJobs: Int { jobs.withLock { $0.count } }

    private func nextDueJob() -> (@Sendable () -> Void)? {
        let now = uptimeNanoseconds()
        return jobs.withLock { jobs in
            guard let index = jobs.indices.filter({ jobs[$0].due <= now }).min(by: { jobs[$0].due < jobs[$1].due }) else { return nil }
            return jobs.remove(at: index).job
        }
    }

    /// Sets the wall clock by `duration` without time passing (an NTP step): the monotonic clock stays.
    package func step(by duration: Duration) {
        current.add(Self.nanoseconds(duration), ordering: .relaxed)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
