@preconcurrency import Glibc

/// Time that only moves forward (CLOCK_MONOTONIC): for spans measured inside the process — stage timings, the age of
/// the oldest event in flight — which a step of the wall clock (NTP, a VM resumed) must not stretch or shrink.
/// Injected where tests drive time (`ManualWallClock` in TestSupport serves as both clocks).
package protocol MonotonicClock: Sendable {
    /// Nanoseconds since an arbitrary fixed point (boot).
    func uptimeNanoseconds() -> UInt64
}

extension MonotonicClock {
    /// ``uptimeNanoseconds()`` in microseconds.
    package func uptimeMicroseconds() -> Int64 { Int64(truncatingIfNeeded: uptimeNanoseconds() / 1000) }
}

/// The system's monotonic clock.
package struct SystemMonotonicClock: MonotonicClock {
    package init() {}

    package func uptimeNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}
