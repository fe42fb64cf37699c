import Synchronization

/// Produced and failed counts, updated from delivery reports.
final class ProduceTally: Sendable {
    private let counts = Mutex<(produced: Int, failed: Int)>((0, 0))
    func succeed() { counts.withLock { $0.produced += 1 } }
    func fail() { counts.withLock { $0.failed += 1 } }
    var snapshot: (produced: Int, failed: Int) { counts.withLock { $0 } }
}
