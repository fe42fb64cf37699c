import EmbeddedPipeline
import Kafka
import Worker
import ToolSupport

/// `callpush kafka-mock`, `callpush mock-apns` (token mode with the bed's key) and a `callpush run` against them,
/// each a process of its own; the worker has joined its group when ``start(bed:mock:worker:)`` returns.
struct WorkerSetup {
    let kafka: ChildProcess
    let mock: ChildProcess
    let worker: WorkerProcess
    let brokers: String
    let topics: WorkerConfiguration

    /// Starts the three with `mock` and `worker` options added to the usual ones, and waits until the worker is
    /// ready. The callpush binary's own defaults (topics, retry tiers) apply; receipts only with `--kafka-receipts`.
    static func start(bed: MockAPNsBed, mock mockOptions: [String], worker workerOptions: [String], partitions: Int = 8)
        async throws -> WorkerSetup
    {
        var topics = WorkerConfiguration()
        topics.dispatcher.routing.emitReceipts = true
        let (kafka, brokers) = try bed.startKafkaMock(partitions: partitions, topics: topics.allTopics)
        let (mock, port) = try bed.startMock(["--certificate", bed.certificate.certificatePath,
                                              "--private-key", bed.certificate.privateKeyPath] + mockOptions)
        let worker = try WorkerProcess.start(callpushPath: bed.callpushPath, arguments: [
            "--kafka-brokers", brokers, "--kafka-session-timeout", "6",
            "--apns-key-file", bed.keyPath, "--apns-key-id", MockAPNsBed.keyID, "--apns-team-id", MockAPNsBed.teamID,
            "--apns-endpoint", "127.0.0.1:\(port)", "--apns-ca-file", bed.certificate.certificatePath,
        ] + workerOptions)
        let setup = WorkerSetup(kafka: kafka, mock: mock, worker: worker, brokers: brokers, topics: topics)
        do {
            try await worker.waitUntilReady(timeout: .seconds(30))
        } catch {
            setup.stop()
            throw error
        }
        return setup
    }

    /// A generator of call traffic to the calls topic, and its producer on the cluster: close it when done (its
    /// thread keeps it, and librdkafka's threads, running until then).
    func generator(mix: CallTrafficMix) throws -> (CallTrafficGenerator, KafkaProducer) {
        var configuration = KafkaProducerConfiguration()
        configuration.bootstrapServers = brokers
        let producer = try KafkaProducer(configuration: configuration, logger: .disabled)
        return (CallTrafficGenerator(producer: producer, topic: topics.callsTopic, bundleID: MockAPNsBed.topic, mix: mix),
                producer)
    }

    /// Stops the worker first (it drains), then the mocks.
    func stop() {
        worker.process.terminate(grace: .seconds(1))
        mock.terminate(grace: .seconds(1))
        kafka.terminate(grace: .seconds(1))
    }
}
