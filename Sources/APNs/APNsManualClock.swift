import Synchronization

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
