public import Kafka
import Synchronization
public import Telemetry

/// One worker process: consumes the calls topic and its retry tiers in the consumer group, dispatches every event
/// to APNs through the ``Dispatcher``, produces the follow-up records, and stores each event's offset only after
/// its outcome is final.
///
/// Retry-tier records that are not due are handed back to the consumer, which pauses their partition until then
/// (never sleeping the poll thread). Readiness turns on at the first partition assignment and off when shutdown
/// begins.
public final class WorkerService: KafkaConsumerDelegate {
    public let configuration: WorkerConfiguration
    public let dispatcher: Dispatcher
    private let producer: KafkaProducer
    private let consumerBox = Mutex<KafkaConsumer?>(nil)
    private let clock: any WorkerClock
    private let logger: Logger
    private let readiness: ReadinessFlag
    private let registry: MetricsRegistry
    private let fatalHandler: @Sendable (KafkaError) -> Void
    private let readyGauge: Gauge

    /// Creates the producer and dispatcher; call ``start()`` to join the group.
    /// - Parameters:
    ///   - sender: sends pushes (the APNs client).
    ///   - readiness: set when partitions are assigned, cleared at shutdown.
    ///   - onFatalError: called once librdkafka reports a fatal error; the process should shut down and restart.
    public init(
        configuration: WorkerConfiguration,
        sender: any PushSender,
        registry: MetricsRegistry,
        readiness: ReadinessFlag = ReadinessFlag(),
        logger: Logger,
        clock: any WorkerClock = SystemWorkerClock(),
        onFatalError: @escaping @Sendable (KafkaError) -> Void = { _ in }
    ) throws(KafkaError) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.readiness = readiness
        self.registry = registry
        self.fatalHandler = onFatalError
        self.readyGauge = registry.gauge(
            "callpush_ready", help: "1 while this worker has partitions assigned and is not draining, else 0.")
        self.producer = try KafkaProducer(configuration: configuration.producer, logger: logger, metrics: registry)
        self.dispatcher = Dispatcher(
            configuration: configuration.dispatcher, sender: sender, producer: KafkaRecordProducer(producer: producer),
            metrics: WorkerMetrics(registry: registry), clock: clock, logger: logger
        )
    }

    /// Subscribes to the calls topic and every retry tier and starts consuming.
    public func start() throws(KafkaError) {
        let consumer = try KafkaConsumer(
            topics: configuration.subscribedTopics, configuration: configuration.consumer, delegate: self,
            logger: logger, metrics: registry
        )
        consumerBox.withLock { $0 = consumer }
        logger.info("worker started", metadata: ["kafka.topics": configuration.subscribedTopics.joined(separator: ",")])
    }

    /// Graceful shutdown: readiness off, stop intake, let in-flight events finish within the consumer's
    /// `closeDrainTimeout`, store and commit their offsets, leave the group, then flush the producer.
    /// Events still unfinished are not committed and will be consumed again.
    public func shutdown() async {
        setReady(false)
        let consumer = consumerBox.withLock { $0 }
        logger.info("worker draining", metadata: ["worker.in_flight": String(dispatcher.inFlightCount)])
        await consumer?.close()
        dispatcher.stop()
        _ = await producer.flush(timeout: configuration.producerFlushTimeout)
        await producer.close(timeout: configuration.producerFlushTimeout)
        logger.info("worker stopped", metadata: ["worker.in_flight": String(dispatcher.inFlightCount)])
    }

    /// Leaves without storing anything, as a crash would (tests of at-least-once delivery).
    public func abandon() async {
        setReady(false)
        dispatcher.stop()
        await consumerBox.withLock { $0 }?.abandon()
        await producer.close(timeout: .seconds(1))
    }

    private func setReady(_ ready: Bool) {
        readiness.set(ready)
        readyGauge.set(ready ? 1 : 0)
    }

    // MARK: - KafkaConsumerDelegate

    public func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) {
        let record = InboundRecord(message)
        let now = clock.nowMilliseconds()
        if let notBefore = configuration.dispatcher.routing.retry.notBefore(record), notBefore > now {
            consumer.hold(message, for: .milliseconds(notBefore - now))
            return
        }
        dispatcher.handle(record) { _ in consumer.complete(message) }
    }

    public func consumer(_ consumer: KafkaConsumer, didAssign partitions: [KafkaTopicPartition]) {
        logger.info("partitions assigned", metadata: ["kafka.partitions": partitions.map(\.description).joined(separator: ",")])
        setReady(true)
    }

    public func consumer(_ consumer: KafkaConsumer, didRevoke partitions: [KafkaTopicPartition]) {
        logger.info("partitions revoked", metadata: ["kafka.partitions": partitions.map(\.description).joined(separator: ",")])
    }

    public func consumer(_ consumer: KafkaConsumer, didFail error: KafkaError) {
        if error.isFatal {
            logger.error("fatal kafka error", metadata: ["error": "\(error)"])
            setReady(false)
            fatalHandler(error)
        } else {
            logger.warning("kafka error", metadata: ["error": "\(error)"])
        }
    }
}
