import Foundation
import Worker

/// Area `json`: the hand-written event decoder against `JSONSerialization` and `JSONDecoder`, and
/// ``PushMapper``'s alert payload encoder against `JSONSerialization` and `JSONEncoder` (each building the
/// payload from the decoded event, as the mapper does), on one core, in interleaved rounds
/// (medians reported).
enum JSONArea {
    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        let rounds = options.quick ? 1 : max(3, options.repetitions)
        let slice = options.quick ? 0.1 : min(0.5, options.seconds / 5)
        let decoder = CallEventDecoder()
        let mapper = PushMapper()
        let bytes = JSONFixture.eventBytes
        let data = Data(bytes)
        let foundationDecoder = JSONDecoder()
        let foundationEncoder = JSONEncoder()
        guard let event = try? decoder.decode(bytes) else {
            print("  FAILED: the fixture event does not decode")
            return result
        }
        var rates: [String: [Double]] = [:]
        for _ in 0..<rounds {
            rates["ours decode", default: []].append(OpsTimer.measure(seconds: slice) {
                (try? decoder.decode(bytes))?.callID.utf8.count ?? 0
            })
            rates["JSONSerialization decode", default: []].append(OpsTimer.measure(seconds: slice) {
                ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?.count ?? 0
            })
            rates["JSONDecoder decode", default: []].append(OpsTimer.measure(seconds: slice) {
                (try? foundationDecoder.decode(FoundationCallEvent.self, from: data))?.callID.utf8.count ?? 0
            })
            rates["ours encode", default: []].append(OpsTimer.measure(seconds: slice) {
                mapper.alertPayload(event).count
            })
            rates["JSONSerialization encode", default: []].append(OpsTimer.measure(seconds: slice) {
                (try? JSONSerialization.data(withJSONObject: JSONFixture.payloadObject(event)))?.count ?? 0
            })
            rates["JSONEncoder encode", default: []].append(OpsTimer.measure(seconds: slice) {
                (try? foundationEncoder.encode(FoundationAlertPayload(event)))?.count ?? 0
            })
        }
        let median = rates.mapValues(Median.of)
        for name in ["ours decode", "JSONSerialization decode", "JSONDecoder decode", "ours encode",
                     "JSONSerialization encode", "JSONEncoder encode"] {
            print("  \(BenchFormat.pad(name, 26)) \(BenchFormat.rate(median[name] ?? 0))")
        }
        result.report(BenchRatio(area: .json, name: "event decode ops/s vs JSONSerialization",
                                 value: median["ours decode"] ?? 0, reference: median["JSONSerialization decode"] ?? 0,
                                 target: nil))
        result.report(BenchRatio(area: .json, name: "event decode ops/s vs JSONDecoder",
                                 value: median["ours decode"] ?? 0, reference: median["JSONDecoder decode"] ?? 0,
                                 target: nil))
        result.report(BenchRatio(area: .json, name: "payload encode ops/s vs JSONSerialization",
                                 value: median["ours encode"] ?? 0, reference: median["JSONSerialization encode"] ?? 0,
                                 target: nil))
        result.report(BenchRatio(area: .json, name: "payload encode ops/s vs JSONEncoder",
                                 value: median["ours encode"] ?? 0, reference: median["JSONEncoder encode"] ?? 0,
                                 target: nil))
        return result
    }
}
