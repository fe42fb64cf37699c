/// A monotonically increasing count. Updates are lock-free and safe from any thread.
package final class Counter: Sendable {
    private let integerPart = MetricCell()
    private let fractionalPart = MetricCell()

    /// A counter in no registry (updates are kept but never exposed).
    package init() {}

    /// Adds `amount` (1 by default).
    package func increment(by amount: Int = 1) {
        precondition(amount >= 0, "counters only go up")
        integerPart.add(integer: UInt64(amount))
    }

    /// Adds a non-integral amount, e.g. seconds of CPU time.
    package func increment(by amount: Double) {
        precondition(amount >= 0, "counters only go up")
        fractionalPart.add(double: amount)
    }

    /// The current total.
    package var value: Double { Double(integerPart.integerValue) + fractionalPart.doubleValue }
}
