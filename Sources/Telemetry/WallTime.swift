/// A point in wall-clock time: nanoseconds since the UNIX epoch (UTC).
package struct WallTime: Comparable, Hashable, Sendable {
    package var nanosecondsSinceEpoch: Int64

    package init(nanosecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }
    package init(millisecondsSinceEpoch: Int64) { nanosecondsSinceEpoch = millisecondsSinceEpoch &* 1_000_000 }

    /// Seconds since the epoch, with the fraction.
    package var seconds: Double { Double(nanosecondsSinceEpoch) / 1e9 }
    /// Whole seconds since the epoch (rounded down), as JWT `iat` counts them.
    package var wholeSeconds: Int64 { nanosecondsSinceEpoch.floorDivided(by: 1_000_000_000) }
    /// Whole milliseconds since the epoch (rounded down), as event times and Kafka timestamps count them.
    package var milliseconds: Int64 { nanosecondsSinceEpoch.floorDivided(by: 1_000_000) }
    /// Whole microseconds since the epoch (rounded down).
    package var microseconds: Int64 { nanosecondsSinceEpoch.floorDivided(by: 1000) }

    package static func < (lhs: WallTime, rhs: WallTime) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
