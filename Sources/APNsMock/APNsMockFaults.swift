/// A fault plan for the mock APNs server. All probabilities are per stream, in 0...1, and are drawn from the
/// injector's seeded generator, so a fixed seed gives the same faults in the same order.
package struct APNsMockFaults: Sendable, Hashable {
    /// Tokens (lowercase hex) answered with `410 Unregistered` and a timestamp. Default: empty.
    package var unregisteredTokens: Set<String>
    /// The 410 timestamp in ms since the epoch. Default: nil (the clock's now).
    var unregisteredTimestampMilliseconds: Int64?
    /// Tokens (lowercase hex) answered with `400 BadDeviceToken`. Default: empty.
    package var badTokens: Set<String>
    /// Chance of `429 TooManyRequests`. Default: 0.
    package var tooManyRequestsProbability: Double
    /// Chance of `500 InternalServerError`. Default: 0.
    package var internalServerErrorProbability: Double
    /// Chance of `503 ServiceUnavailable`. Default: 0.
    package var serviceUnavailableProbability: Double
    /// Latency added to every answer: uniform in `latency ... latency + latencyJitter`. Default: zero.
    package var latency: Duration
    /// Default: zero.
    package var latencyJitter: Duration
    /// Send GOAWAY after this many streams on a connection. Default: nil (never).
    package var goAwayAfterStreams: Int?
    /// Chance of closing the connection without answering. Default: 0.
    package var dropConnectionProbability: Double
    /// Chance of never answering a stream. Default: 0.
    package var stallProbability: Double

    init(
        unregisteredTokens: Set<String> = [],
        unregisteredTimestampMilliseconds: Int64? = nil,
        badTokens: Set<String> = [],
        tooManyRequestsProbability: Double = 0,
        internalServerErrorProbability: Double = 0,
        serviceUnavailableProbability: Double = 0,
        latency: Duration = .zero,
        latencyJitter: Duration = .zero,
        goAwayAfterStreams: Int? = nil,
        dropConnectionProbability: Double = 0,
        stallProbability: Double = 0
    ) {
        self.unregisteredTokens = Set(unregisteredTokens.map { $0.lowercased() })
        self.unregisteredTimestampMilliseconds = unregisteredTimestampMilliseconds
        self.badTokens = Set(badTokens.map { $0.lowercased() })
        self.tooManyRequestsProbability = tooManyRequestsProbability
        self.internalServerErrorProbability = internalServerErrorProbability
        self.serviceUnavailableProbability = serviceUnavailableProbability
        self.latency = latency
        self.latencyJitter = latencyJitter
        self.goAwayAfterStreams = goAwayAfterStreams
        self.dropConnectionProbability = dropConnectionProbability
        self.stallProbability = stallProbability
    }

    /// No faults.
    package static let none = Self()
}
