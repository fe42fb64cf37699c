import Synchronization

/// Where produced records' reports go, by record id: a ring of slots that producing threads fill and the producer's
/// thread empties, so a record needs no object of its own — its id is librdkafka's per-message opaque. A slot is free
/// again once its report was taken; a record whose slot is still taken (by the record a ring's length before it, not
/// reported yet) gets none, and its producer keeps its report target elsewhere (``KafkaProducer``: a spare ring, then
/// an object of its own).
///
/// - Important: thread-safe as used: any thread ``claim(_:for:)``s, the one reporting thread ``take(_:)``s, and a
///   record's claim happens before its take (librdkafka hands the record from the producing thread to its broker
///   thread and its report to the reporting thread through locked queues).
final class KafkaDeliverySlots<Element>: @unchecked Sendable {
    private let mask: UInt
    private let elements: UnsafeMutablePointer<Element>
    /// Whether each slot holds an element.
    private let taken: UnsafeMutablePointer<Atomic<Bool>>
    private var capacity: Int { Int(mask) + 1 }

    /// `capacity` slots, rounded up to a power of two. Their flags (a byte each) are set at once; the elements' memory
    /// is touched only as ids reach them.
    init(capacity: Int) {
        var size = 1
        while size < max(1, capacity) { size <<= 1 }
        mask = UInt(size - 1)
        elements = .allocate(capacity: size)
        taken = .allocate(capacity: size)
        for index in 0..<size { (taken + index).initialize(to: Atomic(false)) }
    }

    deinit {
        // Records never reported (dropped with a closed producer's handle) still hold their elements.
        for index in 0..<capacity where taken[index].load(ordering: .acquiring) {
            (elements + index).deinitialize(count: 1)
        }
        taken.deinitialize(count: capacity)
        taken.deallocate()
        elements.deallocate()
    }

    /// Stores `element` for the record `id`; false when its slot is still taken.
    func claim(_ id: UInt, for element: Element) -> Bool {
        let index = Int(id & mask)
        guard taken[index].compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return false
        }
        (elements + index).initialize(to: element)
        return true
    }

    /// The element stored for the record `id` (which ``claim(_:for:)`` stored); its slot is free again.
    func take(_ id: UInt) -> Element {
        let index = Int(id & mask)
        let element = (elements + index).move()
        taken[index].store(false, ordering: .releasing)
        return element
    }
}
