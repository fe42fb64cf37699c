public import HTTP2
import Synchronization

/// Everything the mock received and how it answered; for tests and the demo summary. Thread-safe. Keeps the most
/// recent ``capacity`` requests; the counts cover all of them.
public final class APNsMockRecorder: Sendable {
    /// One handled stream.
    public struct Entry: Sendable {
        public let connectionID: Int
        public let method: String
        public let path: String
        public let headers: [HTTP2Header]
        public let payload: [UInt8]
        /// nil when the stream was stalled or the connection dropped.
        public let status: Int?
        /// The reason answered, `"Success"` for 200, `"Stalled"` or `"Dropped"` for no answer.
        public let outcome: String
    }

    private struct State {
        /// A ring: once full, `next` is the oldest entry and is overwritten next.
        var ring: [Entry] = []
        var next = 0
        var countsByOutcome: [String: Int] = [:]
        var total = 0
    }

    /// Default: 10_000.
    public let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int = 10_000) { self.capacity = max(1, capacity) }

    func record(_ entry: Entry) {
        state.withLock { state in
            state.total += 1
            state.countsByOutcome[entry.outcome, default: 0] += 1
            if state.ring.count < capacity {
                state.ring.append(entry)
            } else {
                state.ring[state.next] = entry
                state.next = (state.next + 1) % capacity
            }
        }
    }

    /// The kept entries, oldest first.
    public var entries: [Entry] {
        state.withLock { state in Array(state.ring[state.next...] + state.ring[..<state.next]) }
    }
    /// Count per outcome (`"Success"`, a reason such as `"Unregistered"`, `"Stalled"`, `"Dropped"`).
    public var countsByOutcome: [String: Int] { state.withLock { $0.countsByOutcome } }
    /// Streams handled.
    public var totalCount: Int { state.withLock { $0.total } }
    /// Count for one outcome.
    public func count(_ outcome: String) -> Int { state.withLock { $0.countsByOutcome[outcome, default: 0] } }

    public func reset() { state.withLock { $0 = State() } }
}
