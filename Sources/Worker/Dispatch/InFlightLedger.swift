import Synchronization

/// When each event still in flight started, so the age of the oldest one can be read at any time (the
/// `callpush_oldest_inflight_event_age_seconds` gauge: an event stuck anywhere shows up without reading logs), and
/// each finished event's own time is known (the `callpush_worker_processing_seconds` histogram).
///
/// Tickets are handed out in start order (the consumer's poll thread begins them, a batch at a time), so they index a
/// queue of start times directly: ending one marks its entry, and the head skips finished entries lazily, amortised
/// O(1), with no hashing. Thread-safe.
final class InFlightLedger: Sendable {
    private struct State {
        /// The ticket of `starts[0]`.
        var base: UInt64 = 0
        /// Start time (µs) per ticket from `base` on; ``finished`` once ended. `starts[head]` is live (or the queue
        /// is empty); later ones may be finished.
        var starts: [Int64] = []
        var head = 0
    }

    /// Marks an ended ticket (no start time is this small).
    private static let finished = Int64.min

    private let state = Mutex(State())

    /// Records an event starting at `microseconds`; pass the ticket to ``end(_:)``.
    func begin(at microseconds: Int64) -> UInt64 {
        begin(count: 1, at: microseconds)
    }

    /// Records `count` events starting at `microseconds`, with consecutive tickets.
    /// - Returns: the first ticket; the others follow it.
    func begin(count: Int, at microseconds: Int64) -> UInt64 {
        state.withLock { state in
            let ticket = state.base + UInt64(state.starts.count)
            for _ in 0..<count { state.starts.append(microseconds) }
            return ticket
        }
    }

    /// Records the event of `ticket` finished.
    /// - Returns: its start time (µs), nil for a ticket already ended.
    func end(_ ticket: UInt64) -> Int64? {
        state.withLock { state in
            guard ticket >= state.base else { return nil }
            let index = Int(ticket - state.base)
            guard index < state.starts.count, state.starts[index] != Self.finished else { return nil }
            let start = state.starts[index]
            state.starts[index] = Self.finished
            Self.skipFinished(&state)
            return start
        }
    }

    /// The start time (µs) of the oldest live event, nil when none is in flight.
    var oldestStart: Int64? {
        state.withLock { state in state.head < state.starts.count ? state.starts[state.head] : nil }
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
