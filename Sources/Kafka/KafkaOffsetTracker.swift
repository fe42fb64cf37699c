/// Tracks one partition's delivered-but-unfinished offsets so completion may happen in any order while the
/// committable position never passes unfinished work.
///
/// The committable offset (the value to store: the *next* offset to read) is the lowest offset still in flight,
/// or the highest delivered offset + 1 when nothing is in flight. Offsets need not be contiguous (compaction,
/// control records), so no `next == last + 1` arithmetic is used.
///
/// Delivery is normally in increasing order (appended in O(1)); completion is O(1) amortised for the lowest offset
/// and a binary search for any other, with no hashing (a `Set` of offsets completed out of order cost an insert, a
/// lookup and its rehashing per record).
struct KafkaOffsetTracker: Sendable {
    /// Delivered offsets in ascending order; `pending[head...]` is live.
    private var pending: [Int64] = []
    /// `finished[i]`: `pending[i]` completed while a lower offset is still in flight.
    private var finished: [Bool] = []
    private var head = 0
    private(set) var highestDelivered: Int64?
    private(set) var inFlightCount = 0

    init() {}

    /// The offset to store, or `nil` when nothing has been delivered.
    var committableOffset: Int64? {
        if let lowest = lowestInFlight { return lowest }
        return highestDelivered.map { $0 + 1 }
    }

    var lowestInFlight: Int64? { head < pending.count ? pending[head] : nil }

    /// Records a delivered offset. Returns `false` (and changes nothing) if it is already in flight or completed
    /// below the committable position.
    @discardableResult
    mutating func delivered(_ offset: Int64) -> Bool {
        if let highest = highestDelivered, offset <= highest {
            // Redelivery below the top (e.g. after a seek): insert in order unless already known.
            if let committable = committableOffset, offset < committable { return false }
            let index = pending[head...].partitionPoint(where: { $0 >= offset })
            if index < pending.count, pending[index] == offset {
                guard finished[index] else { return false }
                finished[index] = false
                inFlightCount += 1
                return true
            }
            pending.insert(offset, at: index)
            finished.insert(false, at: index)
            inFlightCount += 1
            return true
        }
        pending.append(offset)
        finished.append(false)
        highestDelivered = offset
        inFlightCount += 1
        return true
    }

    /// Records a completed offset. Returns `false` for an offset that is not in flight (unknown or completed twice).
    @discardableResult
    mutating func completed(_ offset: Int64) -> Bool {
        guard let lowest = lowestInFlight, offset >= lowest else { return false }
        if offset == lowest {
            head += 1
            inFlightCount -= 1
            while head < pending.count, finished[head] { head += 1 }
            compactIfNeeded()
            return true
        }
        let index = pending[head...].partitionPoint(where: { $0 >= offset })
        guard index < pending.count, pending[index] == offset, !finished[index] else { return false }
        finished[index] = true
        inFlightCount -= 1
        return true
    }

    private mutating func compactIfNeeded() {
        if head == pending.count {
            pending.removeAll(keepingCapacity: true)
            finished.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > pending.count {
            pending.removeFirst(head)
            finished.removeFirst(head)
            head = 0
        }
    }
}

extension Collection {
    /// The index of the first element for which `predicate` is true, assuming the collection is partitioned
    /// (all false, then all true).
    func partitionPoint(where predicate: (Element) -> Bool) -> Index {
        var low = startIndex
        var count = distance(from: startIndex, to: endIndex)
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if predicate(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
