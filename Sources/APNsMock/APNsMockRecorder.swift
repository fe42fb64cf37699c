import Synchronization

/// Everything the mock received and how it answered; for tests and the demo summary. Thread-safe. Keeps the most
/// recent ``capacity`` requests; the counts cover all of them.
public final class APNsMockRecorder: Sendable {
    /// One handled stream.
    public struct Entry: Sendable {
        public let connectionID: Int
        public let method: String
        public let path: String
        public let headers: [(name: String, value: String)]
        public let payload: [UInt8]
        /// nil when the stream was stalled or the connection dropped.
        public let status: Int?
        /// The reason answered, `"Success"` for 200, `"Stalled"` or `"Dropped"` for no answer.
        public let outcome: String
    }

    private struct State {
        var entries: [Entry] = []
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
            if state.entries.count >= capacity { state.entries.removeFirst(state.entries.count - capacity + 1) }
            state.entries.append(entry)
        }
    }

    /// The kept entries, oldest first.
    public var entries: [Entry] { state.withLock { $0.entries } }
    /// Count per outcome (`"Success"`, a reason such as `"Unregistered"`, `"Stalled"`, `"Dropped"`).
    public var countsByOutcome: [String: Int] { state.withLock { $0.countsByOutcome } }
    /// Streams handled.
    public var totalCount: Int { state.withLock { $0.total } }
    /// Count for one outcome.
    public func count(_ outcome: String) -> Int { state.withLock { $0.countsByOutcome[outcome, default: 0] } }

    public func reset() { state.withLock { $0 = State() } }
}
