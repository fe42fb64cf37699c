import Telemetry
import Synchronization

/// Per-call ordering and cancellation: the dispatcher's memory of which calls have a push in flight, which
/// events wait behind it, and which calls have recently ended.
///
/// Rules, and how the dispatcher uses it: docs/call-handling.md, section "Per-call ordering and cancellation
/// (CallTracker)".
///
/// - Important: thread-safe; all state is behind one `Mutex`, and no callback runs under it.
final class CallTracker<Item: CallTrackerItem>: Sendable {
    typealias Configuration = CallMemoryConfiguration

    /// What to do with an event now.
    enum Decision: String, Hashable, Sendable {
        /// Send it; it is now the call's in-flight event. Call ``complete(_:)`` when its outcome is final.
        case sendNow
        /// Another event of the call is in flight; it comes back from ``complete(_:)``.
        case queued
        /// Past its ring deadline: record outcome `expired`, do not send.
        case expired
        /// The call already ended: record outcome `cancelled`, do not send.
        case cancelled
    }

    struct Admission: Sendable {
        var decision: Decision
        /// Incoming events of the same call that were waiting and are now `cancelled` (record their outcome).
        var cancelledWaiting: [Item]
    }

    struct Release: Sendable {
        var item: Item
        /// `sendNow`, `expired` or `cancelled`.
        var decision: Decision
    }

    private struct CallState {
        var inFlight = false
        var waiting: [Item] = []
    }

    private struct State {
        var calls: [CallKey: CallState] = [:]
        /// Ended calls by ``CallKey/hash``.
        var ended: EndedCallMemory
    }

    let configuration: Configuration
    private let clock: any WallClock
    private let state: Mutex<State>

    init(configuration: Configuration = Configuration(), clock: any WallClock = SystemWallClock()) {
        self.configuration = configuration
        self.clock = clock
        state = Mutex(State(ended: EndedCallMemory(capacity: configuration.endedCallCapacity,
                                                   retention: configuration.endedCallRetention)))
    }

    /// Decides whether `item` may be sent now.
    func admit(_ item: Item) -> Admission {
        let now = clock.now().milliseconds
        return state.withLock { state in Self.decide(item, now: now, in: &state) }
    }

    /// Decides about several items, in order, as ``admit(_:)-(Item)`` does each, under one lock.
    func admit(_ items: some Collection<Item>) -> [Admission] {
        let now = clock.now().milliseconds
        return state.withLock { state in items.map { Self.decide($0, now: now, in: &state) } }
    }

    private static func decide(_ item: Item, now: Int64, in state: inout State) -> Admission {
        let endedKey = item.callKey.hash
        state.ended.forgetExpired(at: now)
        var cancelled: [Item] = []
        if item.eventType == .incoming {
            if state.ended.contains(endedKey, at: now) { return Admission(decision: .cancelled, cancelledWaiting: []) }
            if now >= item.ringDeadlineMilliseconds {
                return Admission(decision: .expired, cancelledWaiting: [])
            }
        } else {
            state.ended.remember(endedKey, at: now)
        }
        // One lookup, changed in place.
        let decision: Decision = update(&state.calls[item.callKey, default: CallState()]) { call in
            if item.eventType != .incoming && !call.waiting.isEmpty {
                call.waiting.removeAll { waiting in
                    guard waiting.eventType == .incoming else { return false }
                    cancelled.append(waiting)
                    return true
                }
            }
            if call.inFlight {
                call.waiting.append(item)
                return .queued
            }
            call.inFlight = true
            return .sendNow
        }
        return Admission(decision: decision, cancelledWaiting: cancelled)
    }

    /// The in-flight event of the call `key` has its final outcome. Returns the waiting events now decided, in order:
    /// at most one `sendNow` (the new in-flight event), preceded by any that expired or were cancelled meanwhile.
    func complete(_ key: CallKey) -> [Release] {
        let now = clock.now().milliseconds
        let endedKey = key.hash
        return state.withLock { state in
            guard let index = state.calls.index(forKey: key) else { return [] }
            // The usual case: nothing waits behind the one in flight; the call is forgotten with one lookup.
            if state.calls.values[index].waiting.isEmpty {
                state.calls.remove(at: index)
                return []
            }
            var call = state.calls.values[index]
            call.inFlight = false
            var releases: [Release] = []
            while !call.waiting.isEmpty {
                let next = call.waiting.removeFirst()
                if next.eventType == .incoming && state.ended.contains(endedKey, at: now) {
                    releases.append(Release(item: next, decision: .cancelled))
                } else if next.eventType == .incoming && now >= next.ringDeadlineMilliseconds {
                    releases.append(Release(item: next, decision: .expired))
                } else {
                    call.inFlight = true
                    releases.append(Release(item: next, decision: .sendNow))
                    break
                }
            }
            state.calls[key] = call.inFlight || !call.waiting.isEmpty ? call : nil
            return releases
        }
    }

    /// Whether a stop-ringing event of the call `key` was seen recently (a retry of its incoming must be cancelled).
    func hasEnded(_ key: CallKey) -> Bool {
        let now = clock.now().milliseconds
        return state.withLock { state in
            state.ended.forgetExpired(at: now)
            return state.ended.contains(key.hash, at: now)
        }
    }

    /// Records that the call `key` ended without an event passing through ``admit(_:)-(Item)`` (e.g. learned
    /// elsewhere).
    func markEnded(_ key: CallKey) {
        markEnded(CollectionOfOne(key))
    }

    /// Records that the calls `keys` ended, as ``markEnded(_:)-(CallKey)`` does each, under one lock.
    func markEnded(_ keys: some Collection<CallKey>) {
        guard !keys.isEmpty else { return }
        let now = clock.now().milliseconds
        state.withLock { state in
            state.ended.forgetExpired(at: now)
            for key in keys { state.ended.remember(key.hash, at: now) }
        }
    }

    /// Ended calls remembered now, and how far back that memory reaches in seconds
    /// (``EndedCallMemory/reachMilliseconds(at:)``).
    var endedCallMemory: (remembered: Int, reachSeconds: Double) {
        let now = clock.now().milliseconds
        return state.withLock { state in
            (state.ended.count, Double(state.ended.reachMilliseconds(at: now)) / 1000)
        }
    }

    /// Calls with an event in flight or waiting, and remembered ended calls (for gauges and tests).
    var counts: (activeCalls: Int, waitingEvents: Int, endedCalls: Int) {
        state.withLock { state in
            (state.calls.count, state.calls.values.reduce(0) { $0 + $1.waiting.count }, state.ended.count)
        }
    }

    private static func update<R>(_ call: inout CallState, _ body: (inout CallState) -> R) -> R { body(&call) }
}
