import Synchronization

/// A thread-safe counter that closures can capture.
package final class Tally: Sendable {
    private let storage = Atomic<Int>(0)

    package init() {}

    package func add(_ amount: Int = 1) { storage.add(amount, ordering: .relaxed) }

    package var value: Int { storage.load(ordering: .relaxed) }
}
