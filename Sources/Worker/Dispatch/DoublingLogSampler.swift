import Synchronization

/// Counts the occurrences of one recurring problem and picks the ones to log: the 1st, 2nd, 4th, 8th, … — a
/// producer that gets something wrong in every event logs about 20 lines in a million events, not a million.
final class DoublingLogSampler: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one occurrence; returns its number when it is one to log, nil otherwise.
    func next() -> Int? {
        let count = count.add(1, ordering: .relaxed).newValue
        return count & (count - 1) == 0 ? count : nil
    }
}
