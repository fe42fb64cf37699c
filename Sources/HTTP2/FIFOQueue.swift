/// A first-in first-out queue: an array with a moving head, compacted once the consumed prefix is large. Popped slots
/// are cleared at once, so a queue never keeps its elements alive after handing them out. `prepend` puts an element
/// back in front (a re-send keeps its place ahead of newer ones) and reuses the consumed prefix when it can.
///
/// Not thread-safe: each queue belongs to one owner (an event loop, or a lock's critical section).
///
/// Its elements are objects, kept as `AnyObject` and cast back on the way out: another module that queues its own
/// class (the APNs pool) calls this type's unspecialised generic code, and over an `[Element?]` each call looked up
/// the array's metadata and moved elements through value witnesses (about 1 500 instructions per `popFirst`, 350 per
/// `isEmpty`); over `[AnyObject?]` that code is concrete.
package struct FIFOQueue<Element: AnyObject> {
    private var items: [AnyObject?] = []
    private var head = 0

    package init() {}

    package var count: Int { items.count - head }
    package var isEmpty: Bool { head >= items.count }
    package var first: Element? { isEmpty ? nil : items[head].map { unsafeDowncast($0, to: Element.self) } }

    package mutating func append(_ element: Element) { items.append(element) }

    package mutating func append(contentsOf elements: some Collection<Element>) {
        items.reserveCapacity(items.count + elements.count)
        for element in elements { items.append(element) }
    }

    package mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            items[head] = element
        } else {
            items.insert(element, at: 0)
        }
    }

    package mutating func popFirst() -> Element? {
        guard head < items.count, let element = items[head] else { return nil }
        items[head] = nil
        head += 1
        compact()
        return unsafeDowncast(element, to: Element.self)
    }

    /// Removes and returns every element matching `predicate`, keeping the order of the rest. Matches usually form a
    /// prefix (deadlines pass in queue order): that is taken by moving the head, and the rest is copied only when a
    /// later element matches too.
    package mutating func removeAll(where predicate: (Element) -> Bool) -> [Element] {
        var removed: [Element] = []
        while let element = first, predicate(element) {
            removed.append(element)
            items[head] = nil
            head += 1
        }
        if let first = items[head...].firstIndex(where: { predicate(unsafeDowncast($0!, to: Element.self)) }) {
            var kept: [AnyObject?] = Array(items[head..<first])
            kept.reserveCapacity(items.count - head)
            for index in first..<items.count {
                let element = unsafeDowncast(items[index]!, to: Element.self)
                if predicate(element) { removed.append(element) } else { kept.append(element) }
            }
            items = kept
            head = 0
        } else {
            compact()
        }
        return removed
    }

    /// Empties the queue; its elements in order.
    package mutating func takeAll() -> [Element] {
        let all = items[head...].map { unsafeDowncast($0!, to: Element.self) }
        items = []
        head = 0
        return all
    }

    package func forEach(_ body: (Element) -> Void) {
        for index in head..<items.count { body(unsafeDowncast(items[index]!, to: Element.self)) }
    }

    private mutating func compact() {
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
