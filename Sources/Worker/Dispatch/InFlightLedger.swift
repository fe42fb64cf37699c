import Synchronization

/// The dispatcher's events in flight, one ticket each: how many there are, when each started — so the age of the
/// oldest can be read at any time (the `callpush_oldest_inflight_event_age_seconds` gauge: an event stuck anywhere
/// shows up without reading logs) and each finished event's own time is known (the
/// `callpush_worker_processing_seconds` histogram) —, and the finished events until their home thread frees them.
///
/// Tickets are handed out in start order (the consumer's poll thread begins them, a batch at a time), so they index a
/// queue of start times directly: ending one marks its entry, and the head skips finished entries lazily, amortised
/// O(1), with no hashing.
///
/// **Freeing on the home thread.** glibc's malloc serves each thread from an arena, and a block freed on another
/// thread takes that arena's lock. Every event's objects (the consumed record's bytes, the decoded event, the APNs
/// request and its payload) are made on the consumer's poll thread and used to die on the thread that finished the
/// event (the producer's delivery thread): under load the two contended on the arena lock. A finished event is kept
/// here instead (``end(_:keeping:)``, under the same lock as its ticket) until the poll thread's next turn drops it
/// (``releaseKept()``), and its blocks go back to that thread's own cache. Objects something else still references are
/// freed wherever that last reference goes; nothing here delays an outcome, only the freeing of memory (by at most one
/// poll turn). What it saved is in docs/performance.md, "Worker CPU".
///
/// Thread-safe.
final class InFlightLedger<Item: Sendable>: Sendable {
    private struct State {
        /// The ticket of `starts[0]`.
        var base: UInt64 = 0
        /// Start time (µs) per ticket from `base` on; ``finished`` once ended. `starts[head]` is live (or the queue
        /// is empty); later ones may be finished.
        var starts: [Int64] = []
        var head = 0
        /// Tickets begun and not ended.
        var live = 0
        /// Finished items, until ``releaseKept()``.
        var kept: [Item] = []
        /// After ``close()`` nothing is kept.
        var closed = false
    }

    /// Marks an ended ticket (no start time is this small).
    private static var finished: Int64 { .min }

    private let state = Mutex(State())
    /// Whether `kept` may hold anything: lets an empty poll turn skip the lock.
    private let mayHoldItems = Atomic<Bool>(false)

    init() {}

    /// Records `count` events starting at `microseconds`, with consecutive tickets.
    /// - Returns: the first ticket (the others follow it) and the number of tickets now live.
    func begin(count: Int, at microseconds: Int64) -> (first: UInt64, live: Int) {
        state.withLock { state in
            let ticket = state.base + UInt64(state.starts.count)
            state.starts.append(contentsOf: repeatElement(microseconds, count: count))
            state.live += count
            return (ticket, state.live)
        }
    }

    /// Records the event of `ticket` finished, and keeps `item` (if any) until the home thread's next
    /// ``releaseKept()`` (after ``close()``, it is dropped here).
    /// - Returns: its start time (µs), nil for a ticket already ended; and the number of tickets still live.
    func end(_ ticket: UInt64, keeping item: Item? = nil) -> (start: Int64?, live: Int) {
        state.withLock { state in
            if let item, !state.closed {
                state.kept.append(item)
                mayHoldItems.store(true, ordering: .relaxed)
            }
            guard ticket >= state.base else { return (nil, state.live) }
            let index = Int(ticket - state.base)
            guard index < state.starts.count, state.starts[index] != Self.finished else { return (nil, state.live) }
            let start = state.starts[index]
            state.starts[index] = Self.finished
            state.live -= 1
            Self.skipFinished(&state)
            return (start, state.live)
        }
    }

    /// The start time (µs) of the oldest live event, nil when none is in flight.
    var oldestStart: Int64? {
        state.withLock { state in state.head < state.starts.count ? state.starts[state.head] : nil }
    }

    /// Tickets begun and not ended.
    var liveCount: Int { state.withLock { $0.live } }

    /// Drops every item kept so far: call on the home thread.
    func releaseKept() {
        guard mayHoldItems.load(ordering: .relaxed) else { return }
        // The returned array is the last reference to the kept items: they are freed here, on the calling thread.
        _ = takeKept(closing: false)
    }

    /// Drops every item kept and keeps none from now on: the home thread has stopped turning (shutdown). Kept items
    /// may reference their owner, which holds this ledger: without this they would keep each other alive.
    func close() {
        _ = takeKept(closing: true)
    }

    private func takeKept(closing: Bool) -> [Item] {
        state.withLock { state in
            if closing { state.closed = true }
            mayHoldItems.store(false, ordering: .relaxed)
            defer { state.kept = [] }
            return state.kept
        }
    }

    private static func skipFinished(_ state: inout State) {
        while state.head < state.starts.count, state.starts[state.head] == finished { state.head += 1 }
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
