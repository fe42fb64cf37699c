import Kafka
import Worker

/// `callpush kafka-mock`: librdkafka's embedded mock cluster, alone, for external clients.
struct KafkaMockCommand: Command {
    let name = "kafka-mock"
    let summary = "run an embedded Kafka cluster (librdkafka's mock) with callpush's topics"
    let usage = """
        Usage: callpush kafka-mock [options]

        Starts librdkafka's in-process mock Kafka cluster on 127.0.0.1 and creates callpush's topics (calls, the
        retry tiers, calls.dlq, apns.tokens.invalidated, calls.outcomes). The first line of stdout is the bootstrap
        server list; the cluster runs until SIGINT/SIGTERM or --duration. Data lives in memory only.
        """
    let examples = [
        "callpush kafka-mock --partitions 8",
        "callpush kafka-mock --topics calls,calls.dlq --duration 60",
    ]
    let options = [
        OptionSpec("broker-count", .integer(1...10), default: "3", "number of mock brokers"),
        OptionSpec("partitions", .integer(1...256), default: "4", "partitions per topic"),
        OptionSpec("topics", .string, "comma-separated topics to create instead of callpush's own"),
        OptionSpec("duration", .number(0...86_400), default: "0", "seconds to run; 0 runs until a signal"),
    ]

    func run(_ options: ParsedOptions) async -> Int32 {
        let signals = ShutdownSignals()
        let cluster: KafkaMockCluster
        do {
            cluster = try KafkaMockCluster(brokers: options.defaultedInteger("broker-count"))
            let topics = options.has("topics") ? options.list("topics") : WorkerConfiguration.demoTopics
            for topic in topics { try cluster.createTopic(topic, partitions: options.defaultedInteger("partitions")) }
            Output.line(cluster.bootstrapServers)
            Output.line("topics: \(topics.joined(separator: ","))")
        } catch {
            CommandLineTool.printError("cannot start the mock cluster: \(error)")
            return ExitStatus.failure
        }
        let duration = options.defaultedNumber("duration")
        if duration > 0 {
            _ = await signals.wait(upTo: .milliseconds(Int(duration * 1000)))
        } else {
            _ = await signals.wait()
        }
        cluster.close()
        return ExitStatus.success
    }
}

extension WorkerConfiguration {
    /// Every topic of the default configuration, receipts included.
    static var demoTopics: [String] {
        var configuration = WorkerConfiguration()
        configuration.dispatcher.routing.emitReceipts = true
        return configuration.allTopics
    }
}
