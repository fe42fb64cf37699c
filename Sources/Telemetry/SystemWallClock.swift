@preconcurrency import Glibc

/// The system's real-time clock (`CLOCK_REALTIME`).
package struct SystemWallClock: WallClock {
    package init() {}

    package func now() -> WallTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallTime(nanosecondsSinceEpoch: Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec))
    }
}
