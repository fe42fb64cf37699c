import Synchronization

/// One lock-free 64-bit cell. Doubles are stored by bit pattern and updated with compare-and-swap,
/// so concurrent updates never lose an increment.
final class MetricCell: Sendable {
    private let bits = Atomic<UInt64>(0)

    init() {}

    var doubleValue: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }
    var integerValue: UInt64 { bits.load(ordering: .relaxed) }

    func add(integer amount: UInt64) {
        bits.wrappingAdd(amount, ordering: .relaxed)
    }

    func add(double amount: Double) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + amount).bitPattern
            let (exchanged, original) = bits.compareExchange(
                expected: current, desired: next, ordering: .relaxed
            )
            if exchanged { return }
            current = original
        }
    }

    /// Raises the stored double to `value` if it is larger.
    func max(double value: Double) {
        var current = bits.load(ordering: .relaxed)
        while Double(bitPattern: current) < value {
            let (exchanged, original) = bits.compareExchange(
                expected: current, desired: value.bitPattern, ordering: .relaxed
            )
            if exchanged { return }
            current = original
        }
    }

    func set(double value: Double) {
        bits.store(value.bitPattern, ordering: .relaxed)
    }
}
