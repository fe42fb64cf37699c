import Synchronization

/// The current fault plan plus its random generator; changeable while the server runs. Thread-safe.
package final class APNsMockFaultInjector: Sendable {
    /// What the injector decided for one stream that passed validation.
    package enum Outcome: Sendable, Hashable {
        case none
        case badDeviceToken
        case unregistered(timestampMilliseconds: Int64?)
        case tooManyRequests
        case internalServerError
        case serviceUnavailable
        case stall
        case dropConnection
    }

    private struct State {
        var faults: APNsMockFaults
        var random: APNsMockRandom
    }

    private let state: Mutex<State>
    /// True while the plan is ``APNsMockFaults/none``: every request then skips the lock and the draws.
    private let quiet: Atomic<Bool>

    /// - Parameters:
    ///   - faults: the initial plan. Default: none.
    ///   - seed: the generator's seed. Default: 0x5EED.
    init(faults: APNsMockFaults = .none, seed: UInt64 = 0x5EED) {
        state = Mutex(State(faults: faults, random: APNsMockRandom(seed: seed)))
        quiet = Atomic(faults == .none)
    }

    /// The current plan.
    package var faults: APNsMockFaults {
        get { state.withLock { $0.faults } }
        set { update { $0 = newValue } }
    }

    /// Changes the plan in place.
    package func update(_ body: (inout APNsMockFaults) -> Void) {
        state.withLock { state in
            body(&state.faults)
            quiet.store(state.faults == .none, ordering: .relaxed)
        }
    }

    /// Restarts the generator (for reproducible runs).
    func reseed(_ seed: UInt64) { state.withLock { $0.random = APNsMockRandom(seed: seed) } }

    /// Decides the fault for one valid request to `token` (hex digits in any case), and the added latency. Token
    /// lists are checked first, then one random draw picks among drop, stall, 429, 500, 503 (cumulative
    /// probabilities). Without faults it returns at once: no lock, no draw.
    func decide(token: UnsafeBufferPointer<UInt8>) -> (outcome: Outcome, delay: Duration, goAwayAfterStreams: Int?) {
        if quiet.load(ordering: .relaxed) { return (.none, .zero, nil) }
        return state.withLock { state in
            let faults = state.faults
            var delay = faults.latency
            if faults.latencyJitter > .zero { delay += faults.latencyJitter * state.random.unit() }
            let draw = state.random.unit()
            var outcome = Outcome.none
            let listed = faults.badTokens.isEmpty && faults.unregisteredTokens.isEmpty
                ? nil : String(decoding: token, as: UTF8.self).lowercased()
            if let listed, faults.badTokens.contains(listed) {
                outcome = .badDeviceToken
            } else if let listed, faults.unregisteredTokens.contains(listed) {
                outcome = .unregistered(timestampMilliseconds: faults.unregisteredTimestampMilliseconds)
            } else {
                var threshold = 0.0
                for (probability, candidate) in [
                    (faults.dropConnectionProbability, Outcome.dropConnection), (faults.stallProbability, .stall),
                    (faults.tooManyRequestsProbability, .tooManyRequests),
                    (faults.internalServerErrorProbability, .internalServerError),
                    (faults.serviceUnavailableProbability, .serviceUnavailable),
                ] {
                    threshold += max(0, probability)
                    if draw < threshold {
                        outcome = candidate
                        break
                    }
                }
            }
            return (outcome, max(.zero, delay), faults.goAwayAfterStreams)
        }
    }
}
