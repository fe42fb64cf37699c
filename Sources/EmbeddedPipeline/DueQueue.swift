/// A min-heap of items by due time: O(log n) to add and to take the earliest, for the generator's pending hang-ups.
struct DueQueue<Item> {
    private var heap: [(due: ContinuousClock.Instant, item: Item)] = []

    var isEmpty: Bool { heap.isEmpty }

    mutating func insert(_ item: Item, due: ContinuousClock.Instant) {
        heap.append((due, item))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest item if it is due at `now`.
    mutating func popDue(at now: ContinuousClock.Instant) -> Item? {
        guard let first = heap.first, first.due <= now else { return nil }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].due < heap[smallest].due { smallest = left }
            if right < heap.count && heap[right].due < heap[smallest].due { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first.item
    }
}
