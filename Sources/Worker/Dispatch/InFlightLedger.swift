import Synchronization

/// The dispatcher's events in flight, one ticket each: how many there are, when the oldest started — so its age can
/// be read at any time (the `callpush_oldest_inflight_event_age_seconds` gauge: an event stuck anywhere shows up
/// without reading logs) —, and the ended events until their home thread frees them.
///
/// **One owner, no lock per event.** The home thread (the consumer's poll thread, which begins every event) owns the
/// start times: it begins a batch's tickets and, once a turn, takes the events ended since (``releaseKept()``), marks
/// their tickets and publishes the oldest start. Any thread ends an event by pushing it onto a list of ended events
/// with one atomic exchange — the event is its own list node (``InFlightLedgerItem``), so ending allocates nothing.
/// The live count is an atomic. The home thread's state sits behind a mutex it takes once per batch and once per
/// turn, never per event.
///
/// Tickets are handed out in start order, so they index a queue of start times directly: marking one ended is O(1)
/// and the head skips ended entries lazily, amortised O(1), with no hashing.
///
/// **Freeing on the home thread.** glibc's malloc serves each thread from an arena, and a block freed on another
/// thread takes that arena's lock. Every event's objects (the consumed record's bytes, the decoded event, the APNs
/// request and its payload) are made on the poll thread and used to die on the thread that finished the event (the
/// producer's delivery thread): under load the two contended on the arena lock. An ended event stays on the list
/// until the poll thread's next turn drops it, and its blocks go back to that thread's own cache. Objects something
/// else still references are freed wherever that last reference goes; nothing here delays an outcome, only the
/// freeing of memory (by at most one poll turn). What it saved is in docs/performance.md, "Worker CPU".
///
/// Thread-safe: ``end(_:)``, ``endUntracked()``, ``liveCount``, ``oldestStart`` and ``close()`` from any thread;
/// ``begin(count:at:)``, ``forget(_:)`` and ``releaseKept()`` from the home thread.
final class InFlightLedger<Item: InFlightLedgerItem>: Sendable {
    private struct Starts {
        /// The ticket of `starts[0]`.
        var base: UInt64 = 0
        /// Start time (µs) per ticket from `base` on; ``ended`` once ended. `starts[head]` is live (or the queue is
        /// empty); later ones may have ended.
        var starts: [Int64] = []
        var head = 0
    }

    /// Marks an ended ticket (no start time is this small); also "none" in ``oldest``.
    private static var ended: Int64 { .min }

    private let starts = Mutex(Starts())
    /// Ended items not yet taken by the home thread, newest first, linked through ``InFlightLedgerItem/ledgerNext``;
    /// each holds one retain.
    private let endedHead = Atomic<Unmanaged<Item>?>(nil)
    private let live = Atomic<Int>(0)
    /// The start of the oldest live ticket as of the home thread's last turn, ``ended`` if none.
    private let oldest = Atomic<Int64>(.min)
    /// After ``close()`` ended items are freed at once.
    private let closed = Atomic<Bool>(false)

    init() {}

    /// Records `count` events starting at `microseconds`, with consecutive tickets (home thread).
    /// - Returns: the first ticket (the others follow it) and the number of events now live.
    func begin(count: Int, at microseconds: Int64) -> (first: UInt64, live: Int) {
        let first = starts.withLock { state in
            let ticket = state.base + UInt64(state.starts.count)
            state.starts.append(contentsOf: repeatElement(microseconds, count: count))
            if state.head == 0, state.starts.count == count { oldest.store(microseconds, ordering: .relaxed) }
            return ticket
        }
        return (first, live.add(count, ordering: .relaxed).newValue)
    }

    /// Records `item`'s event ended, and keeps it until the home thread's next ``releaseKept()`` (after ``close()``,
    /// it is not kept). Lock-free.
    /// - Returns: the number of events still live, and whether `item` is the first kept since the home thread's last
    /// turn; nil when `item` had ended before (nothing changes).
    @discardableResult
    func end(_ item: Item) -> (live: Int, first: Bool)? {
        guard item.markLedgerEnded() else { return nil }
        let remaining = live.subtract(1, ordering: .relaxed).newValue
        guard !closed.load(ordering: .acquiring) else { return (remaining, false) }
        let node = Unmanaged.passRetained(item)
        var head = endedHead.load(ordering: .relaxed)
        while true {
            item.setLedgerNext(head)
            let (exchanged, current) = endedHead.compareExchange(
                expected: head, desired: node, successOrdering: .acquiringAndReleasing, failureOrdering: .relaxed)
            if exchanged { break }
            head = current
        }
        // Closed meanwhile: nothing would take it.
        if closed.load(ordering: .acquiring) { Self.free(endedHead.exchange(nil, ordering: .acquiring)) }
        return (remaining, head == nil)
    }

    /// Takes `ticket` out of the start times at once (home thread): its event is still live, but has no item to end
    /// with (``endUntracked()`` ends it), so it does not count towards the oldest start.
    func forget(_ ticket: UInt64) {
        starts.withLock { state in
            Self.mark(ticket, in: &state)
            publishOldest(state)
        }
    }

    /// Ends an event whose ticket was forgotten (``forget(_:)``).
    /// - Returns: the number of events still live.
    func endUntracked() -> Int { live.subtract(1, ordering: .relaxed).newValue }

    /// The start time (µs) of the oldest live event as of the home thread's last turn; nil when none is in flight.
    var oldestStart: Int64? {
        guard live.load(ordering: .relaxed) > 0 else { return nil }
        let start = oldest.load(ordering: .relaxed)
        return start == Self.ended ? nil : start
    }

    /// Events begun and not ended.
    var liveCount: Int { live.load(ordering: .relaxed) }

    /// Takes the events ended since the last call: marks their tickets, publishes the oldest start, passes each to
    /// `body` (newest first), and drops them — on the calling thread, the home thread.
    func releaseKept(_ body: (Item) -> Void = { _ in }) {
        guard endedHead.load(ordering: .relaxed) != nil, let list = endedHead.exchange(nil, ordering: .acquiring) else { return }
        starts.withLock { state in
            var node: Unmanaged<Item>? = list
            while let current = node {
                let item = current.takeUnretainedValue()
                Self.mark(item.ticket, in: &state)
                node = item.ledgerNext
            }
            publishOldest(state)
        }
        Self.free(list, passingEach: body)
    }

    /// Drops every item kept and keeps none from now on: the home thread has stopped turning (shutdown). Kept items
    /// may reference their owner, which holds this ledger: without this they would keep each other alive.
    func close() {
        closed.store(true, ordering: .releasing)
        Self.free(endedHead.exchange(nil, ordering: .acquiring))
    }

    /// Releases each item of a taken list, after passing it to `body`: the last reference to most of them, so they
    /// are freed here.
    private static func free(_ list: Unmanaged<Item>?, passingEach body: (Item) -> Void = { _ in }) {
        var node = list
        while let current = node {
            let item = current.takeUnretainedValue()
            body(item)
            node = item.ledgerNext
            current.release()
        }
    }

    private func publishOldest(_ state: Starts) {
        oldest.store(state.head < state.starts.count ? state.starts[state.head] : Self.ended, ordering: .relaxed)
    }

    private static func mark(_ ticket: UInt64, in state: inout Starts) {
        guard ticket >= state.base else { return }
        let index = Int(ticket - state.base)
        guard index < state.starts.count else { return }
        state.starts[index] = ended
        while state.head < state.starts.count, state.starts[state.head] == ended { state.head += 1 }
        if state.head == state.starts.count {
            state.base += UInt64(state.head)
            state.starts.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head > 4096, state.head * 2 > state.starts.count {
            state.base += UInt64(state.head)
            state.starts.removeFirst(state.head)
            state.head = 0
        }
    }
}
