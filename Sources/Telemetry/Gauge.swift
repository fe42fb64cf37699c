/// A value that goes up and down. Updates are lock-free and safe from any thread.
public final class Gauge: Sendable {
    private let cell = MetricCell()

    /// A gauge in no registry (updates are kept but never exposed).
    public init() {}

    public func set(_ value: Double) { cell.set(double: value) }
    public func set(_ value: Int) { cell.set(double: Double(value)) }
    public func increment(by amount: Double = 1) { cell.add(double: amount) }
    public func decrement(by amount: Double = 1) { cell.add(double: -amount) }

    public var value: Double { cell.doubleValue }
}
