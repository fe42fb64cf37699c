import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time for provider tokens (JWT `iat`) and token ages; injectable so tests control time.
public protocol APNsClock: Sendable {
    /// Seconds since the UNIX epoch (UTC).
    func now() -> Double
}

/// The system's real-time clock.
public struct APNsSystemClock: APNsClock {
    public init() {}

    public func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// A clock backed by a closure, for callers that already have a time source.
public struct APNsClosureClock: APNsClock {
    private let body: @Sendable () -> Double
    public init(_ body: @escaping @Sendable () -> Double) { self.body = body }
    public func now() -> Double { body() }
}

/// A clock that only moves when told to; for tests.
public final class APNsManualClock: APNsClock {
    private let current: Mutex<Double>

    /// - Parameter start: seconds since the epoch. Default: 1_764_489_600 (2025-11-30T08:00:00Z).
    public init(start: Double = 1_764_489_600) { current = Mutex(start) }

    public func now() -> Double { current.withLock { $0 } }

    /// Moves the clock forward (or back, with a negative value) by `seconds`.
    public func advance(by seconds: Double) { current.withLock { $0 += seconds } }

    /// Sets the clock to `seconds` since the epoch.
    public func set(_ seconds: Double) { current.withLock { $0 = seconds } }
}
