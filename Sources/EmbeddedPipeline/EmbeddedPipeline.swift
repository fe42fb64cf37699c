internal import APNs
package import APNsMock
import CGlibcMalloc
import Crypto
import Foundation
package import Kafka
import Synchronization
package import Telemetry
package import Worker

/// An in-process Kafka cluster with every worker topic, the mock APNs server in provider-token mode (with a key
/// generated for the run), an APNs client pointed at it over TLS, and any number of workers in one consumer group.
package final class EmbeddedPipeline: Sendable {
    package let configuration: EmbeddedPipelineConfiguration
    package let cluster: KafkaMockCluster
    package let mock: APNsMockServer
    let client: APNsClient
    /// The worker configuration with the cluster's bootstrap servers filled in.
    package let workerConfiguration: WorkerConfiguration
    package let registry: MetricsRegistry
    private let logger: Logger
    private let workers = Mutex<[WorkerService]>([])
    /// Producers made by ``makeProducer(clientID:)``, closed by ``shutdown()``.
    private let producers = Mutex<[KafkaProducer]>([])

    package static let keyID = "EMBEDDED01"
    package static let teamID = "CALLPUSH01"

    /// Starts the cluster, creates the topics, starts the mock APNs server and the client. Workers start with
    /// ``startWorker(readiness:)``.
    package init(
        configuration: EmbeddedPipelineConfiguration = .init(),
        registry: MetricsRegistry = MetricsRegistry(),
        logger: Logger = .disabled
    ) throws {
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        cluster = try KafkaMockCluster(brokers: configuration.brokers)
        var worker = configuration.worker
        worker.consumer.bootstrapServers = cluster.bootstrapServers
        worker.producer.bootstrapServers = cluster.bootstrapServers
        workerConfiguration = worker
        for topic in worker.allTopics {
            try cluster.createTopic(topic, partitions: configuration.partitions)
        }
        let key = try ES256PrivateKey.generate()
        mock = try APNsMockServer(
            configuration: APNsMockServerConfiguration(
                apns: APNsMockConfiguration(
                    authentication: .providerToken(keys: [Self.keyID: key.publicKey], teamID: Self.teamID),
                    allowedBundleIDs: [configuration.bundleID]
                ),
                faults: configuration.faults,
                seed: configuration.seed,
                recorderCapacity: configuration.mockRecorderCapacity
            ),
            logger: logger
        )
        client = try APNsClient(
            configuration: APNsClientConfiguration(
                credentials: .token(keyPEM: key.pemRepresentation(), keyID: Self.keyID, teamID: Self.teamID),
                customEndpoint: mock.endpoint,
                connectionsPerPool: configuration.apnsConnections,
                requestTimeout: configuration.apnsRequestTimeout,
                reconnectBackoffInitial: .milliseconds(100),
                reconnectBackoffMaximum: .seconds(2),
                eventLoops: configuration.apnsEventLoops
            ),
            metrics: registry,
            logger: logger
        )
    }

    /// Starts one more worker in the consumer group (each with its own client id).
    @discardableResult
    package func startWorker(readiness: ReadinessFlag = ReadinessFlag()) throws -> WorkerService {
        var configuration = workerConfiguration
        let index = workers.withLock { $0.count }
        configuration.consumer.clientID = "callpush-embedded-\(index)"
        configuration.producer.clientID = "callpush-embedded-\(index)"
        let worker = try WorkerService(
            configuration: configuration, sender: client, timers: client.timers, registry: registry, readiness: readiness, logger: logger
        )
        try worker.start()
        workers.withLock { $0.append(worker) }
        return worker
    }

    /// A producer on the cluster, for generators and tests; ``shutdown()`` closes it unless it was closed before.
    package func makeProducer(clientID: String = "callpush-embedded-generator") throws(KafkaError) -> KafkaProducer {
        var configuration = KafkaProducerConfiguration()
        configuration.bootstrapServers = cluster.bootstrapServers
        configuration.clientID = clientID
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        producers.withLock { $0.append(producer) }
        return producer
    }

    /// Shuts every worker down gracefully, closes the producers it made, then the client, the mock and the cluster.
    /// (A producer's thread keeps it, and librdkafka's threads reconnecting to the vanished cluster, alive until it is
    /// closed: each one left open kept five threads and their buffers after every run of the bench.)
    package func shutdown() async {
        for worker in workers.withLock({ $0 }) { await worker.shutdown() }
        for producer in producers.withLock({ list in defer { list.removeAll() }; return list }) {
            await producer.close(timeout: .seconds(1))
        }
        client.shutdown()
        mock.stop()
        cluster.close()
        // What the pipeline's threads allocated is freed now, but glibc keeps free pages in the arenas those threads
        // used, several times what is still in use: give them back, so a process that runs pipelines one
        // after another (tests, the bench) does not grow by each one's peak.
        malloc_trim(0)
    }

    /// Final outcomes counted so far, by outcome.
    package var outcomes: [Outcome: Int] {
        let metrics = WorkerMetrics(registry: registry)
        return Dictionary(uniqueKeysWithValues: Outcome.allCases.map { ($0, Int(metrics.outcomeCounter($0).value)) })
    }

    /// `created_at` → APNs answer latency histogram.
    package var latency: Histogram { WorkerMetrics(registry: registry).endToEndLatency }
}
