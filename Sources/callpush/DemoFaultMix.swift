import APNsMock
import EmbeddedPipeline

/// The named fault mixes `callpush demo --faults` offers.
enum DemoFaultMix: String, CaseIterable {
    case none, light, realistic, storm

    var faults: APNsMockFaults {
        var faults = APNsMockFaults.none
        guard self != .none else { return faults }
        faults.unregisteredTokens = CallTrafficGenerator.deadTokens
        faults.latency = .milliseconds(2)
        faults.latencyJitter = .milliseconds(3)
        switch self {
        case .none:
            break
        case .light:
            faults.tooManyRequestsProbability = 0.005
            faults.serviceUnavailableProbability = 0.005
        case .realistic:
            faults.tooManyRequestsProbability = 0.01
            faults.internalServerErrorProbability = 0.005
            faults.serviceUnavailableProbability = 0.02
            faults.goAwayAfterStreams = 3_000
            faults.dropConnectionProbability = 0.0002
            faults.stallProbability = 0.0002
        case .storm:
            faults.internalServerErrorProbability = 0.05
            faults.serviceUnavailableProbability = 0.2
            faults.goAwayAfterStreams = 500
            faults.dropConnectionProbability = 0.001
        }
        return faults
    }

    var summary: String {
        switch self {
        case .none: "no faults"
        case .light: "0.5% 429, 0.5% 503, dead tokens"
        case .realistic: "1% 429, 0.5% 500, 2% 503, GOAWAY every 3000 streams, rare drops and stalls, dead tokens"
        case .storm: "20% 503, 5% 500, GOAWAY every 500 streams, drops, dead tokens"
        }
    }
}
