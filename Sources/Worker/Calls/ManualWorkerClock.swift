import Synchronization

/// A clock that only moves when told to (tests, simulations). Thread-safe.
public final class ManualWorkerClock: WorkerClock {
    private let now: Atomic<Int64>

    public init(milliseconds: Int64 = 0) { now = Atomic(milliseconds) }

    public func nowMilliseconds() -> Int64 { now.load(ordering: .relaxed) }

    public func set(_ milliseconds: Int64) { now.store(milliseconds, ordering: .relaxed) }

    public func advance(by milliseconds: Int64) { now.add(milliseconds, ordering: .relaxed) }
}
