package import Crypto
package import HTTP2
import Synchronization

/// Everything the mock received and how it answered; for tests and the demo summary. Thread-safe. Keeps the most
/// recent ``capacity`` requests; the counts cover all of them.
package final class APNsMockRecorder: Sendable {
    /// One handled stream.
    package struct Entry: Sendable {
        let connectionID: Int
        /// The client certificate the connection's TLS handshake verified (certificate auth); nil when it
        /// presented none.
        package let clientCertificate: CertificateFingerprint?
        /// The request's header fields as received (kept as bytes; ``method``, ``path`` and ``headers`` decode them).
        let fields: HTTP2RawHeaderBlock
        package let payload: [UInt8]
        /// nil when the stream was stalled or the connection dropped.
        package let status: Int?
        /// The reason answered, `"Success"` for 200, `"Stalled"` or `"Dropped"` for no answer.
        let outcome: String

        /// `:method`.
        package var method: String { fields.first(name: ":method") ?? "" }
        /// `:path`.
        package var path: String { fields.first(name: ":path") ?? "" }
        /// The regular headers in arrival order.
        package var headers: [HTTP2Header] { fields.decoded() }
    }

    private struct State {
        /// A ring: once full, `next` is the oldest entry and is overwritten next.
        var ring: [Entry] = []
        var next = 0
        /// Counts of every outcome but success, which is counted apart (no hashing, no lock on the common path).
        var countsByOtherOutcome: [String: Int] = [:]
    }

    /// The outcome of a 200.
    static let success = "Success"

    /// Entries kept; 0 keeps only the counts (`callpush mock-apns`, which shows only counts). Default: 10_000.
    let capacity: Int
    private let state = Mutex(State())
    private let successes = Atomic<Int>(0)
    private let total = Atomic<Int>(0)

    init(capacity: Int = 10_000) { self.capacity = max(0, capacity) }

    /// Counts `outcome` and keeps the entry `makeEntry` builds (built only when entries are kept). A success with no
    /// entries kept takes no lock.
    func record(outcome: String, _ makeEntry: () -> Entry) {
        total.add(1, ordering: .relaxed)
        let isSuccess = outcome == Self.success
        if isSuccess { successes.add(1, ordering: .relaxed) }
        guard capacity > 0 || !isSuccess else { return }
        let entry = capacity > 0 ? makeEntry() : nil
        state.withLock { state in
            if !isSuccess { state.countsByOtherOutcome[outcome, default: 0] += 1 }
            guard let entry else { return }
            if state.ring.count < capacity {
                state.ring.append(entry)
            } else {
                state.ring[state.next] = entry
                state.next = (state.next + 1) % capacity
            }
        }
    }

    /// The kept entries, oldest first.
    package var entries: [Entry] {
        state.withLock { state in Array(state.ring[state.next...] + state.ring[..<state.next]) }
    }
    /// Count per outcome (`"Success"`, a reason such as `"Unregistered"`, `"Stalled"`, `"Dropped"`).
    package var countsByOutcome: [String: Int] {
        var counts = state.withLock { $0.countsByOtherOutcome }
        let successes = successes.load(ordering: .relaxed)
        if successes > 0 { counts[Self.success] = successes }
        return counts
    }
    /// Streams handled.
    package var totalCount: Int { total.load(ordering: .relaxed) }
    /// Count for one outcome.
    package func count(_ outcome: String) -> Int {
        if outcome == Self.success { return successes.load(ordering: .relaxed) }
        return state.withLock { $0.countsByOtherOutcome[outcome, default: 0] }
    }

    package func reset() {
        state.withLock { state in
            state = State()
            successes.store(0, ordering: .relaxed)
            total.store(0, ordering: .relaxed)
        }
    }
}
