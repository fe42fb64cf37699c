import Synchronization

/// When each event still in flight started, so the age of the oldest one can be read at any time (the
/// `callpush_oldest_inflight_event_age_seconds` gauge: an event stuck anywhere shows up without reading logs), and
/// each finished event's own time is known (the `callpush_worker_processing_seconds` histogram).
///
/// Tickets are handed out in start order (the consumer's poll thread begins them), so the live ticket at the head
/// of the queue is the oldest; finished tickets are skipped lazily, amortised O(1). Thread-safe.
final class InFlightLedger: Sendable {
    private struct State {
        var nextTicket: UInt64 = 0
        /// Start time (µs) of every live ticket.
        var starts: [UInt64: Int64] = [:]
        /// Tickets in start order; `order[head]` is live (or the queue is empty), later ones may be finished.
        var order: [UInt64] = []
        var head = 0
    }

    private let state = Mutex(State())

    /// Records an event starting at `microseconds`; pass the ticket to ``end(_:)``.
    func begin(at microseconds: Int64) -> UInt64 {
        state.withLock { state in
            let ticket = state.nextTicket
            state.nextTicket += 1
            state.starts[ticket] = microseconds
            state.order.append(ticket)
            return ticket
        }
    }

    /// Records the event of `ticket` finished.
    /// - Returns: its start time (µs), nil for a ticket already ended.
    func end(_ ticket: UInt64) -> Int64? {
        state.withLock { state in
            let start = state.starts.removeValue(forKey: ticket)
            Self.skipFinished(&state)
            return start
        }
    }

    /// The start time (µs) of the oldest live event, nil when none is in flight.
    var oldestStart: Int64? {
        state.withLock { state in state.head < state.order.count ? state.starts[state.order[state.head]] : nil }
    }

    private static func skipFinished(_ state: inout State) {
        while state.head < state.order.count, state.starts[state.order[state.head]] == nil { state.head += 1 }
        if state.head > 4096, state.head * 2 > state.order.count {
            state.order.removeFirst(state.head)
            state.head = 0
        }
    }
}
