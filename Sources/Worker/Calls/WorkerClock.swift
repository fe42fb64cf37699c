import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time in milliseconds since the UNIX epoch (event deadlines are epoch times).
/// Injected everywhere time matters so tests control it.
public protocol WorkerClock: Sendable {
    func nowMilliseconds() -> Int64
}

/// The system wall clock (`CLOCK_REALTIME`).
public struct SystemWorkerClock: WorkerClock {
    public init() {}

    public func nowMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// A clock that only moves when told to (tests, simulations). Thread-safe.
public final class ManualWorkerClock: WorkerClock {
    private let now: Atomic<Int64>

    public init(milliseconds: Int64 = 0) { now = Atomic(milliseconds) }

    public func nowMilliseconds() -> Int64 { now.load(ordering: .relaxed) }

    public func set(_ milliseconds: Int64) { now.store(milliseconds, ordering: .relaxed) }

    public func advance(by milliseconds: Int64) { now.add(milliseconds, ordering: .relaxed) }
}
