import Synchronization

@testable import Worker

/// A clock that only moves when told to (tests, simulations). Thread-safe.
final class ManualWorkerClock: WorkerClock {
    private let now: Atomic<Int64>

    init(milliseconds: Int64 = 0) { now = Atomic(milliseconds) }

    func nowMilliseconds() -> Int64 { now.load(ordering: .relaxed) }

    func set(_ milliseconds: Int64) { now.store(milliseconds, ordering: .relaxed) }

    func advance(by milliseconds: Int64) { now.add(milliseconds, ordering: .relaxed) }
}
