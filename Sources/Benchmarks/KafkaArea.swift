import BenchSupport
import Kafka

/// Area `kafka`: ``KafkaThroughputProbe`` (in-process idempotent producer, group consumer) vs kcat producing and
/// consuming the same number of same-shaped messages against an identical embedded mock cluster in this process.
enum KafkaArea {
    static let partitions = 16
    static let valueSize = 200

    static func messages(_ options: BenchOptions) -> Int { options.quick ? 20_000 : 200_000 }

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        let messages = messages(options)
        let kcat = ExternalTool.require([.kcat], for: "kafka reference (kcat)").map { Kcat(path: $0[.kcat]!) }
        var produced: [Double] = []
        var consumed: [Double] = []
        var kcatProduced: [Double] = []
        var kcatConsumed: [Double] = []
        for _ in 0..<options.repetitions {
            do {
                let probe = try await KafkaThroughputProbe.run(messages: messages, partitions: partitions,
                                                               valueSize: valueSize)
                print("  in-process: produced \(BenchFormat.rate(probe.producedPerSecond)), consumed "
                    + "\(BenchFormat.rate(probe.consumedPerSecond)) (\(probe.consumed)/\(messages) consumed, "
                    + "\(probe.failedDeliveries) failed deliveries)")
                produced.append(probe.producedPerSecond)
                consumed.append(probe.consumedPerSecond)
                if let kcat {
                    let reference = try kcat.run(messages: messages, partitions: partitions, valueSize: valueSize)
                    print("  kcat:       produced \(BenchFormat.rate(reference.producedPerSecond)), consumed "
                        + "\(BenchFormat.rate(reference.consumedPerSecond)) (\(reference.consumed)/\(messages) "
                        + "consumed, startup \(BenchFormat.milliseconds(reference.startupSeconds)) subtracted)")
                    kcatProduced.append(reference.producedPerSecond)
                    kcatConsumed.append(reference.consumedPerSecond)
                }
            } catch {
                print("  FAILED: \(error)")
            }
        }
        guard !consumed.isEmpty else { return result }
        result.kafkaConsumePerSecond = Median.of(consumed)
        guard !kcatConsumed.isEmpty else { return result }
        result.report(BenchRatio(area: .kafka, name: "produce msgs/s vs kcat -P (\(messages) msgs)",
                                 value: Median.of(produced), reference: Median.of(kcatProduced), target: .atLeast(0.9)))
        result.report(BenchRatio(area: .kafka, name: "consume msgs/s vs kcat -C (\(messages) msgs)",
                                 value: Median.of(consumed), reference: Median.of(kcatConsumed), target: .atLeast(0.9)))
        return result
    }
}
