import Synchronization

/// The current fault plan plus its random generator; changeable while the server runs. Thread-safe.
public final class APNsMockFaultInjector: Sendable {
    /// What the injector decided for one stream that passed validation.
    public enum Outcome: Sendable, Hashable {
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

    /// - Parameters:
    ///   - faults: the initial plan. Default: none.
    ///   - seed: the generator's seed. Default: 0x5EED.
    public init(faults: APNsMockFaults = .none, seed: UInt64 = 0x5EED) {
        state = Mutex(State(faults: faults, random: APNsMockRandom(seed: seed)))
    }

    /// The current plan.
    public var faults: APNsMockFaults {
        get { state.withLock { $0.faults } }
        set { state.withLock { $0.faults = newValue } }
    }

    /// Changes the plan in place.
    public func update(_ body: (inout APNsMockFaults) -> Void) { state.withLock { body(&$0.faults) } }

    /// Restarts the generator (for reproducible runs).
    public func reseed(_ seed: UInt64) { state.withLock { $0.random = APNsMockRandom(seed: seed) } }

    /// Decides the fault for one valid request to `token`, and the added latency. Token lists are checked first,
    /// then one random draw picks among drop, stall, 429, 500, 503 (cumulative probabilities).
    func decide(token: String) -> (outcome: Outcome, delaySeconds: Double, goAwayAfterStreams: Int?) {
        state.withLock { state in
            let faults = state.faults
            var delay = faults.latencySeconds
            if faults.latencyJitterSeconds > 0 { delay += faults.latencyJitterSeconds * state.random.unit() }
            let draw = state.random.unit()
            let outcome: Outcome
            if faults.badTokens.contains(token) {
                outcome = .badDeviceToken
            } else if faults.unregisteredTokens.contains(token) {
                outcome = .unregistered(timestampMilliseconds: faults.unregisteredTimestampMilliseconds)
            } else {
                let choices: [(probability: Double, outcome: Outcome)] = [
                    (faults.dropConnectionProbability, .dropConnection), (faults.stallProbability, .stall),
                    (faults.tooManyRequestsProbability, .tooManyRequests),
                    (faults.internalServerErrorProbability, .internalServerError),
                    (faults.serviceUnavailableProbability, .serviceUnavailable),
                ]
                var threshold = 0.0
                var chosen = Outcome.none
                for choice in choices {
                    threshold += max(0, choice.probability)
                    if draw < threshold {
                        chosen = choice.outcome
                        break
                    }
                }
                outcome = chosen
            }
            return (outcome, max(0, delay), faults.goAwayAfterStreams)
        }
    }
}
