import BenchSupport
import Kafka
import ToolSupport

/// Area `kafka`: ``KafkaThroughputProbe`` (in-process idempotent producer, group consumer) vs kcat producing and
/// consuming the same number of same-shaped messages on the same embedded mock cluster in this process (a topic
/// each), and kcat consuming the records our producer wrote.
enum KafkaArea {
    static let partitions = 16
    static let valueSize = 200

    static func messages(_ options: BenchOptions) -> Int { options.quick ? 20_000 : 200_000 }

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        let messages = messages(options)
        let kcat = ExternalTool.require(["kcat"], for: "kafka reference (kcat)").map { Kcat(path: $0["kcat"]!) }
        var produced: [Double] = []
        var consumed: [Double] = []
        var kcatProduced: [Double] = []
        var kcatConsumed: [Double] = []
        var kcatConsumedOurs: [Double] = []
        for _ in 0..<options.repetitions {
            do {
                // One cluster per repetition, both clients on it: each topic's records as its own producer batched them.
                let cluster = try KafkaMockCluster(brokers: 1)
                defer { cluster.close() }
                try cluster.createTopic("probe", partitions: partitions)
                let probe = try await KafkaThroughputProbe.run(messages: messages, partitions: partitions,
                                                               valueSize: valueSize,
                                                               bootstrapServers: cluster.bootstrapServers)
                print("  in-process: produced \(BenchFormat.rate(probe.producedPerSecond)), consumed "
                    + "\(BenchFormat.rate(probe.consumedPerSecond)) (\(probe.consumed)/\(messages) consumed, "
                    + "\(probe.failedDeliveries) failed deliveries; longest pause between deliveries "
                    + "\(BenchFormat.milliseconds(probe.consumeLongestPauseSeconds)))")
                produced.append(probe.producedPerSecond)
                consumed.append(probe.consumedPerSecond)
                if let kcat {
                    let reference = try kcat.run(messages: messages, partitions: partitions, valueSize: valueSize,
                                                 cluster: cluster, topic: "kcat")
                    // kcat reading the records our producer wrote: the same message sets as our consumer read (the
                    // mock broker returns one message set per partition per fetch, so batching shapes the rate).
                    let sameData = try kcat.consumeRate(brokers: cluster.bootstrapServers, topic: "probe",
                                                        startup: reference.startupSeconds)
                    print("  kcat:       produced \(BenchFormat.rate(reference.producedPerSecond)), consumed "
                        + "\(BenchFormat.rate(reference.consumedPerSecond)) (\(reference.consumed)/\(messages) "
                        + "consumed, startup \(BenchFormat.milliseconds(reference.startupSeconds)) subtracted); "
                        + "kcat -C on our producer's records \(BenchFormat.rate(sameData.perSecond))")
                    kcatProduced.append(reference.producedPerSecond)
                    kcatConsumed.append(reference.consumedPerSecond)
                    kcatConsumedOurs.append(sameData.perSecond)
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
        result.report(BenchRatio(area: .kafka, name: "consume msgs/s vs kcat -C, same records (\(messages) msgs)",
                                 value: Median.of(consumed), reference: Median.of(kcatConsumedOurs), target: .atLeast(0.9)))
        result.report(BenchRatio(area: .kafka, name: "consume msgs/s vs kcat -C on kcat's records",
                                 value: Median.of(consumed), reference: Median.of(kcatConsumed), target: nil))
        return result
    }
}
