/// What a producer keeps for each record between enqueueing it and its delivery report, by record id.
///
/// Ids are handed out in order and reports come back nearly in order (in order per partition), so the elements sit
/// in a ring buffer indexed by `id - firstID`: inserting appends at the back, removing moves the element out of its
/// slot and, when it was the oldest, the front past the emptied slots. No hashing, and no allocation once the ring
/// has grown to the records in flight (a `Dictionary` keyed by id was one of the producer's hottest costs: lookups,
/// hashing, resizes).
struct KafkaPendingDeliveries<Element> {
    /// The slot of id `firstID + i` is `ring[(start + i) & mask]`, for `i < span`; nil once removed. Its size is a
    /// power of two.
    private var ring: [Element?] = []
    private var mask = -1
    private var start = 0
    /// Slots from the oldest id still present (or the next id, when empty) to the newest.
    private var span = 0
    private var firstID: UInt = 1
    /// Elements present.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Stores `element` under the next id (ids start at 1 and are never reused) and returns that id.
    mutating func insert(_ element: Element) -> UInt {
        if span == ring.count { grow() }
        ring[(start + span) & mask] = element
        span += 1
        count += 1
        return firstID + UInt(span - 1)
    }

    /// Takes the element stored under `id`; nil when there is none (never inserted, or already removed).
    mutating func remove(_ id: UInt) -> Element? {
        guard id >= firstID, id - firstID < UInt(span) else { return nil }
        let offset = Int(id - firstID)
        guard let element = ring[(start + offset) & mask].take() else { return nil }
        count -= 1
        if offset == 0 {
            // The oldest went: move the front past every slot already emptied.
            repeat {
                start = (start + 1) & mask
                span -= 1
                firstID += 1
            } while span > 0 && ring[start] == nil
        }
        return element
    }

    /// Takes every element, in id order.
    mutating func removeAll() -> [Element] {
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for offset in 0..<span {
            if let element = ring[(start + offset) & mask].take() { elements.append(element) }
        }
        firstID += UInt(span)
        start = 0
        span = 0
        count = 0
        return elements
    }

    /// Doubles the ring (it starts at 1024 slots), laying the slots out from index 0. The slots are moved bitwise: a
    /// producer that enqueues faster than reports come back grows it to all its records in flight (e.g. 200k).
    private mutating func grow() {
        let size = max(1024, ring.count * 2)
        let first = min(span, ring.count - start)  // slots from `start` to the end of the old storage
        let larger = ring.withUnsafeMutableBufferPointer { old in
            [Element?](unsafeUninitializedCapacity: size) { new, initialized in
                guard let target = new.baseAddress else { return }
                if let source = old.baseAddress {
                    target.moveInitialize(from: source + start, count: first)
                    (target + first).moveInitialize(from: source, count: span - first)
                    // The old storage's moved-out slots hold nil again, so releasing it releases nothing twice.
                    (source + start).initialize(repeating: nil, count: first)
                    source.initialize(repeating: nil, count: span - first)
                }
                (target + span).initialize(repeating: nil, count: size - span)
                initialized = size
            }
        }
        ring = larger
        mask = size - 1
        start = 0
    }
}

extension KafkaPendingDeliveries: Sendable where Element: Sendable {}
