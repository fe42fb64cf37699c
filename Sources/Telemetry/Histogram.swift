/// A distribution of observations in fixed buckets, exposed as Prometheus `_bucket{le}`, `_sum`, `_count`.
///
/// Each observation touches one bucket cell and the sum, both lock-free; buckets are made cumulative only
/// when exposed, so `+Inf` always equals `_count`.
package final class Histogram: Sendable {
    /// Upper bounds, ascending, without `+Inf`.
    package let upperBounds: [Double]
    private let cells: [MetricCell]  // upperBounds.count + 1 (the last is +Inf)
    private let total = MetricCell()
    private let largest = MetricCell()

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds
        self.cells = (0...upperBounds.count).map { _ in MetricCell() }
    }

    /// Records one observation (in base units, e.g. seconds).
    package func observe(_ value: Double) {
        var low = 0
        var high = upperBounds.count
        while low < high {
            let middle = (low + high) / 2
            if value <= upperBounds[middle] { high = middle } else { low = middle + 1 }
        }
        cells[low].add(integer: 1)
        total.add(double: value)
        largest.max(double: value)
    }

    /// The largest observation so far (0 when empty); kept for summaries, not part of the exposition.
    package var maximum: Double { largest.doubleValue }

    /// Cumulative counts per bucket, the last being `+Inf` (= the count).
    package var cumulativeCounts: [UInt64] {
        var running: UInt64 = 0
        return cells.map { cell in
            running &+= cell.integerValue
            return running
        }
    }

    package var count: UInt64 { cumulativeCounts.last ?? 0 }
    var sum: Double { total.doubleValue }

    /// The value below which `quantile` (0…1) of observations fall, interpolated linearly inside the bucket
    /// as Prometheus' `histogram_quantile` does. Nil when empty.
    package func estimate(quantile: Double) -> Double? {
        Self.estimate(quantile: quantile, cumulativeCounts: cumulativeCounts, upperBounds: upperBounds)
    }

    /// ``estimate(quantile:)`` over any cumulative counts with these bounds, e.g. the difference of two snapshots
    /// of ``cumulativeCounts`` (the observations of a time window).
    package static func estimate(quantile: Double, cumulativeCounts counts: [UInt64], upperBounds: [Double]) -> Double? {
        guard let total = counts.last, total > 0 else { return nil }
        let rank = quantile * Double(total)
        for (index, cumulative) in counts.enumerated() where Double(cumulative) >= rank {
            if index == upperBounds.count { return upperBounds.last }
            let lower = index == 0 ? 0 : upperBounds[index - 1]
            let below = index == 0 ? 0 : Double(counts[index - 1])
            let inBucket = Double(cumulative) - below
            guard inBucket > 0 else { return upperBounds[index] }
            return lower + (upperBounds[index] - lower) * (rank - below) / inBucket
        }
        return upperBounds.last
    }

    /// Default latency buckets in seconds, 0.5 ms to 30 s, with a boundary at 0.3 s for the SLO.
    package static let latencyBuckets: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2.5, 5, 10, 30,
    ]
}
