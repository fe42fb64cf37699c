import Telemetry
import BenchSupport
import Foundation
import Kafka
import ToolSupport

/// kcat producing and consuming `messages` records shaped like ``KafkaThroughputProbe``'s (key = index, 200-byte
/// value, 16 partitions, idempotent producer without compression) on a cluster it is given, timed as whole
/// processes minus the time kcat needs to start and fetch metadata (`kcat -L`, median of three).
struct Kcat {
    struct Result: Sendable {
        var producedPerSecond: Double
        var consumedPerSecond: Double
        var consumed: Int
        /// Seconds of `kcat -L` subtracted from both runs.
        var startupSeconds: Double
    }

    let path: String

    /// Produces the records to `topic` (created here) on `cluster` with `kcat -P`, then reads them with `kcat -C`.
    func run(messages: Int, partitions: Int, valueSize: Int, cluster: KafkaMockCluster, topic: String) throws -> Result {
        try cluster.createTopic(topic, partitions: partitions)
        let brokers = cluster.bootstrapServers
        let input = NSTemporaryDirectory() + "callpush-bench-kcat-\(getpid()).txt"
        let value = String(repeating: "a", count: valueSize)
        var text = ""
        text.reserveCapacity(messages * (valueSize + 10))
        for index in 0..<messages { text += "\(index):\(value)\n" }
        try Data(text.utf8).write(to: URL(fileURLWithPath: input))
        defer { unlink(input) }

        let startup = try startupSeconds(brokers: brokers, topic: topic)
        let produce = try timed([
            "-P", "-b", brokers, "-t", topic, "-K", ":", "-l", input, "-X", "enable.idempotence=true",
            "-X", "compression.codec=none", "-X", "queue.buffering.max.messages=500000",
            "-X", "socket.nagle.disable=true",
        ])
        guard produce.status == 0 else { throw BenchFailure("kcat -P failed: \(produce.output.suffix(300))") }
        let consume = try consumeRate(brokers: brokers, topic: topic, startup: startup)
        return Result(
            producedPerSecond: Double(messages) / max(0.001, produce.seconds - startup),
            consumedPerSecond: consume.perSecond, consumed: consume.count, startupSeconds: startup)
    }

    /// `kcat -L` on `topic`: the start-up and metadata time subtracted from the timed runs; the median of three
    /// (a single run is sometimes many times slower on a loaded machine, which would inflate kcat's rates).
    func startupSeconds(brokers: String, topic: String) throws -> Double {
        var runs: [Double] = []
        for _ in 0..<3 { runs.append(try timed(["-L", "-b", brokers, "-t", topic]).seconds) }
        return Median.of(runs)
    }

    /// Reads `topic` from the beginning to its end with `kcat -C`, minus `startup`.
    func consumeRate(brokers: String, topic: String, startup: Double) throws -> (perSecond: Double, count: Int) {
        let consume = try timed(["-C", "-b", brokers, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%o\\n",
                                 "-X", "socket.nagle.disable=true"])
        guard consume.status == 0 else { throw BenchFailure("kcat -C failed: \(consume.output.suffix(300))") }
        let consumed = consume.output.split(separator: "\n").count
        return (Double(consumed) / max(0.001, consume.seconds - startup), consumed)
    }

    private func timed(_ arguments: [String]) throws -> (seconds: Double, status: Int32, output: String) {
        let start = ContinuousClock.now
        let process = try ChildProcess(arguments, executable: path)
        let status = process.wait(timeout: .seconds(300))
        let elapsed = ContinuousClock.now - start
        let seconds = elapsed.inSeconds
        return (seconds, status, process.log)
    }
}
