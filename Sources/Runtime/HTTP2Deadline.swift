@preconcurrency import Glibc
internal import Telemetry

/// A point in time on the monotonic clock (CLOCK_MONOTONIC), in nanoseconds. Cheap to create and compare.
public struct HTTP2Deadline: Hashable, Comparable, Sendable {
    /// Nanoseconds since an arbitrary fixed point (boot).
    package var uptimeNanoseconds: UInt64

    package init(uptimeNanoseconds: UInt64) {
        self.uptimeNanoseconds = uptimeNanoseconds
    }

    /// The current time.
    package static func now() -> HTTP2Deadline {
        HTTP2Deadline(uptimeNanoseconds: SystemMonotonicClock().uptimeNanoseconds())
    }

    /// A deadline `duration` from now.
    package static func after(_ duration: Duration) -> HTTP2Deadline {
        now() + duration
    }

    /// A deadline that never passes.
    public static let distantFuture = HTTP2Deadline(uptimeNanoseconds: UInt64.max)

    public static func < (lhs: HTTP2Deadline, rhs: HTTP2Deadline) -> Bool {
        lhs.uptimeNanoseconds < rhs.uptimeNanoseconds
    }

    package static func + (lhs: HTTP2Deadline, rhs: Duration) -> HTTP2Deadline {
        let nanos = rhs.nanoseconds
        if nanos <= 0 { return lhs }
        let (sum, overflow) = lhs.uptimeNanoseconds.addingReportingOverflow(UInt64(nanos))
        return HTTP2Deadline(uptimeNanoseconds: overflow ? UInt64.max : sum)
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? Int64.min : Int64.max }
        return scaled &+ attoseconds / 1_000_000_000
    }
}
