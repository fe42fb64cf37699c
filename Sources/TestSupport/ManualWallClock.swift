import Synchronization
public import Telemetry

/// A wall clock that only moves when told to, and the monotonic clock beside it; for tests. Thread-safe.
/// ``advance(by:)`` moves both (the monotonic one forward only); ``step(by:)`` moves the wall clock alone, as NTP does.
public final class ManualWallClock: WallClock, MonotonicClock {
    private let current: Atomic<Int64>
    private let uptime = Atomic<UInt64>(1_000_000_000)

    /// - Parameter start: the time it shows. Default: 2025-11-30T08:00:00Z.
    public init(_ start: WallTime = WallTime(nanosecondsSinceEpoch: 1_764_489_600_000_000_000)) {
        current = Atomic(start.nanosecondsSinceEpoch)
    }

    public convenience init(millisecondsSinceEpoch: Int64) {
        self.init(WallTime(millisecondsSinceEpoch: millisecondsSinceEpoch))
    }

    public func now() -> WallTime { WallTime(nanosecondsSinceEpoch: current.load(ordering: .relaxed)) }

    public func uptimeNanoseconds() -> UInt64 { uptime.load(ordering: .relaxed) }

    /// Lets `duration` pass: the wall clock moves by it (back, for a negative one), the monotonic clock forward.
    public func advance(by duration: Duration) {
        step(by: duration)
        let nanoseconds = Self.nanoseconds(duration)
        if nanoseconds > 0 { uptime.add(UInt64(nanoseconds), ordering: .relaxed) }
    }

    /// Sets the wall clock by `duration` without time passing (an NTP step): the monotonic clock stays.
    public func step(by duration: Duration) {
        current.add(Self.nanoseconds(duration), ordering: .relaxed)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
