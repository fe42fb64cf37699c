import Synchronization
public import Telemetry

/// A wall clock that only moves when told to; for tests. Thread-safe.
public final class ManualWallClock: WallClock {
    private let current: Atomic<Int64>

    /// - Parameter start: the time it shows. Default: 2025-11-30T08:00:00Z.
    public init(_ start: WallTime = WallTime(nanosecondsSinceEpoch: 1_764_489_600_000_000_000)) {
        current = Atomic(start.nanosecondsSinceEpoch)
    }

    public convenience init(millisecondsSinceEpoch: Int64) {
        self.init(WallTime(millisecondsSinceEpoch: millisecondsSinceEpoch))
    }

    public func now() -> WallTime { WallTime(nanosecondsSinceEpoch: current.load(ordering: .relaxed)) }

    /// Moves the clock forward (or back, with a negative duration).
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        current.add(seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000, ordering: .relaxed)
    }
}
