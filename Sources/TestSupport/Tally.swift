import Synchronization

/// A thread-safe counter that closures can capture.
public final class Tally: Sendable {
    private let storage = Atomic<Int>(0)

    public init() {}

    public func add(_ amount: Int = 1) { storage.add(amount, ordering: .relaxed) }

    public var value: Int { storage.load(ordering: .relaxed) }
}
