/// A value that goes up and down. Updates are lock-free and safe from any thread.
package final class Gauge: Sendable {
    private let cell = MetricCell()

    /// A gauge in no registry (updates are kept but never exposed).
    package init() {}

    package func set(_ value: Double) { cell.set(double: value) }
    package func set(_ value: Int) { cell.set(double: Double(value)) }
    package func increment(by amount: Double = 1) { cell.add(double: amount) }
    package func decrement(by amount: Double = 1) { cell.add(double: -amount) }

    package var value: Double { cell.doubleValue }
}
