extension Int64 {
    /// `self + other`, clamped to `Int64.min ... Int64.max` instead of trapping: for epoch times plus configured or
    /// received spans, which a hostile header or an absurd setting must not turn into a crash.
    package func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self * other`, clamped instead of trapping.
    package func saturatingMultiply(_ other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) == (other < 0) ? .max : .min
    }
}
