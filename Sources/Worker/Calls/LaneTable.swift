/// Values by lane — a partition number — in an array indexed by it: a lookup is an index, not a hash (the read-ahead
/// looks its lanes up several times per event, and four `Dictionary` lookups keyed by `Int32` cost about 600
/// instructions per event). Partition numbers are small and dense; the array reaches the highest lane given a value.
/// A negative lane (no partition has one) holds nothing: it reads as nil and a value given it is dropped.
///
/// No `_modify` accessor: its coroutine frame was allocated and freed on every access. Arrays grow in place through
/// ``append(_:toLane:)``.
struct LaneTable<Value> {
    private var slots: [Value?] = []

    /// The value of `lane`, nil when it has none; set nil to remove it.
    subscript(lane: Int32) -> Value? {
        get { lane >= 0 && Int(lane) < slots.count ? slots[Int(lane)] : nil }
        set {
            guard lane >= 0 else { return }
            let index = Int(lane)
            if index >= slots.count {
                guard newValue != nil else { return }
                slots += repeatElement(nil, count: index + 1 - slots.count)
            }
            slots[index] = newValue
        }
    }

    /// Appends `element` to `lane`'s array, an empty one made first when the lane has none; returns the array's count
    /// after (0 for a negative lane, which keeps nothing).
    mutating func append<Element>(_ element: Element, toLane lane: Int32) -> Int where Value == [Element] {
        if self[lane] == nil { self[lane] = [] }
        guard lane >= 0, Int(lane) < slots.count else { return 0 }
        slots[Int(lane)]!.append(element)
        return slots[Int(lane)]!.count
    }

    /// The lanes that have a value, in ascending order.
    var lanes: [Int32] { slots.indices.filter { slots[$0] != nil }.map { Int32($0) } }

    /// The values, by ascending lane.
    var values: some Sequence<Value> { slots.lazy.compactMap { $0 } }

    /// Removes `lane`'s value and returns it.
    mutating func removeValue(forLane lane: Int32) -> Value? {
        guard lane >= 0, Int(lane) < slots.count else { return nil }
        defer { slots[Int(lane)] = nil }
        return slots[Int(lane)]
    }

    mutating func removeAll() { slots.removeAll() }
}

extension LaneTable: Sendable where Value: Sendable {}
