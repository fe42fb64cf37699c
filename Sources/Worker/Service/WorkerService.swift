package import Kafka
import Dispatch
import Synchronization
package import Telemetry

/// One worker process: consumes the calls topic and its retry tiers in the consumer group, dispatches every event
/// to APNs through the ``Dispatcher``, produces the follow-up records, and stores each event's offset only after
/// its outcome is final.
///
/// Retry-tier records that are not due are handed back to the consumer, which pauses their partition until then
/// (never sleeping the poll thread). Readiness turns on at the first partition assignment and off when shutdown
/// begins.
package final class WorkerService: KafkaConsumerDelegate {
    package let configuration: WorkerConfiguration
    let dispatcher: Dispatcher
    private let producer: KafkaProducer
    /// Reads newly assigned partitions' backlogs for the read-ahead (its librdkafka consumer only while it reads).
    private let rangeReader: KafkaRangeReader
    private let consumerBox = Mutex<KafkaConsumer?>(nil)
    private let clock: any WallClock
    private let logger: Logger
    private let readiness: ReadinessFlag
    private let registry: MetricsRegistry
    private let fatalHandler: @Sendable (KafkaError) -> Void
    private let readyGauge: Gauge

    /// Creates the producer and dispatcher; call ``start()`` to join the group.
    /// - Parameters:
    ///   - sender: sends pushes (the APNs client).
    ///   - timers: runs the dispatcher's delayed work (the sender's event loops: `APNsAppRouter.timers`).
    ///   - readiness: set at the first assignment (even an empty one: a worker beyond the partition count is ready
    ///     and idle, and a rollout does not wait for it), cleared at shutdown.
    ///   - onFatalError: called once librdkafka reports a fatal error; the process should shut down and restart.
    package init(
        configuration: WorkerConfiguration,
        sender: any PushSender,
        timers: any JobScheduler,
        registry: MetricsRegistry,
        readiness: ReadinessFlag = ReadinessFlag(),
        logger: Logger,
        clock: any WallClock = SystemWallClock(),
        onFatalError: @escaping @Sendable (KafkaError) -> Void = { _ in }
    ) throws(KafkaError) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.readiness = readiness
        self.registry = registry
        self.fatalHandler = onFatalError
        self.readyGauge = registry.gauge(
            "callpush_ready", help: "1 once this worker has joined its consumer group (its first assignment, even an empty one, "
                + "has come) and until it drains, else 0.")
        self.producer = try KafkaProducer(configuration: configuration.producer, logger: logger, metrics: registry)
        var dispatching = configuration.dispatcher
        dispatching.callsTopic = configuration.callsTopic
        // The read-ahead must let go before the consumer pauses the partitions it is reading ahead on.
        let limits = configuration.consumer.backPressure
        dispatching.readAhead.maxHeldPerPartition = max(1, min(dispatching.readAhead.maxHeldPerPartition, limits.maxInFlightPerPartition / 2))
        dispatching.readAhead.maxHeld = max(1, min(dispatching.readAhead.maxHeld, limits.maxInFlight / 2))
        let rangeReader = KafkaRangeReader(configuration: KafkaRangeReaderConfiguration(consumer: configuration.consumer), logger: logger)
        self.rangeReader = rangeReader
        let dispatcher = Dispatcher(
            configuration: dispatching, sender: sender, producer: producer, timers: timers,
            scanner: configuration.backlogScans ? KafkaBacklogScanner(reader: rangeReader) : nil, metrics: WorkerMetrics(registry: registry), clock: clock,
            logger: logger
        )
        self.dispatcher = dispatcher
        let oldest = registry.gauge(
            "callpush_oldest_inflight_event_age_seconds",
            help: "Age of the oldest consumed event whose outcome is not final yet (0 when none): a stuck event shows here.")
        let endedCalls = registry.gauge(
            "callpush_ended_calls", help: "Ended calls remembered, so a retried or replayed incoming call after its hang-up is dropped.")
        let endedCallsReach = registry.gauge(
            "callpush_ended_calls_reach_seconds",
            help: "How far back the memory of ended calls reaches: 600 until it is full, then the age of its oldest call. "
                + "An incoming retry or replay of a call that ended longer ago rings again.")
        // Weakly: the registry outlives the worker when it is shared (the APNs client's metrics keep it), and a strong
        // capture kept the dispatcher, and through it the sender (the APNs client with its connections and their
        // nghttp2 sessions), alive after shutdown: memory left allocated by every in-process pipeline run.
        registry.addCollector { [weak dispatcher] in
            guard let dispatcher else { return }
            oldest.set(dispatcher.oldestInFlightAgeSeconds)
            let memory = dispatcher.endedCallMemory
            endedCalls.set(memory.remembered)
            endedCallsReach.set(memory.reachSeconds)
        }
    }

    /// Maps events consumed from now on with `mapping` (a configuration reload; events already mapped keep theirs).
    package func updateMapping(_ mapping: MappingConfiguration) {
        dispatcher.updateMapping(mapping)
    }

    /// Checks the topics, prepares the producer for the topics it writes, subscribes to the calls topic and every
    /// retry tier and starts consuming.
    /// - Throws: ``KafkaError`` when a topic is missing or a retry tier's partition count differs from the calls
    ///   topic's (code `configuration`, one line naming both), or the consumer cannot start.
    package func start() throws(KafkaError) {
        // One metadata request checks the topics and prepares the producer for those it writes: an outcome's records
        // must not wait for librdkafka to learn of their topic (up to 1 s at a topic's first record), as each event's
        // offset is stored only once they are acknowledged.
        try checkPartitionCounts(producer.prepare(
            topics: configuration.allTopics, requiring: configuration.subscribedTopics,
            timeout: configuration.metadataTimeout))
        // The group distributes the calls topic; partition p of every retry tier goes with its partition p.
        let consumer = try KafkaConsumer(
            topics: [configuration.callsTopic], companionTopics: Array(configuration.subscribedTopics.dropFirst()),
            configuration: configuration.consumer, delegate: self, logger: logger, metrics: registry
        )
        consumerBox.withLock { $0 = consumer }
        logger.info("worker started", metadata: ["kafka.topics": configuration.subscribedTopics.joined(separator: ",")])
    }

    /// Graceful shutdown: readiness off, stop intake, let in-flight events finish within the consumer's
    /// `closeDrainTimeout`, store and commit their offsets, leave the group, then flush the producer.
    /// Events still unfinished are not committed and will be consumed again.
    package func shutdown() async {
        setReady(false)
        if let id = configuration.consumer.groupInstanceID {
            logger.warning("static member \(id) stops without leaving the group: its partitions wait up to kafka.session-timeout "
                + "(\(Int(configuration.consumer.sessionTimeout.inSeconds)) s) for another worker unless it starts again with the same id")
        }
        let consumer = consumerBox.withLock { $0 }
        logger.info("worker draining", metadata: ["worker.in_flight": String(dispatcher.inFlightCount)])
        dispatcher.giveBackHeld()
        rangeReader.close()
        await consumer?.close()
        dispatcher.stop()
        _ = await producer.flush(timeout: configuration.producerFlushTimeout)
        await producer.close(timeout: configuration.producerFlushTimeout)
        logger.info("worker stopped", metadata: ["worker.in_flight": String(dispatcher.inFlightCount)])
    }

    /// Consumed events whose outcome is not final yet.
    package var inFlightCount: Int { dispatcher.inFlightCount }

    private func setReady(_ ready: Bool) {
        readiness.set(ready)
        readyGauge.set(ready ? 1 : 0)
    }

    // MARK: - KafkaConsumerDelegate

    package func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) {
        self.consumer(consumer, didReceive: [message])
    }

    /// Hands retry-tier records that are not due back to the consumer (with every later record of their partition
    /// in the batch, which stays behind them), and the rest to the dispatcher as one batch.
    package func consumer(_ consumer: KafkaConsumer, didReceive messages: [KafkaMessage]) {
        let now = clock.now().milliseconds
        var heldUntil: [KafkaTopicPartition: Int64] = [:]
        // The messages that go, once one is held; until then (the usual case: nothing held) the batch goes as it came.
        var going: [KafkaMessage]?
        let retry = configuration.dispatcher.routing.retry
        for (index, message) in messages.enumerated() {
            // A record the consumer held until its due time is due now (its bound was taken from the first `now`).
            let notBefore = message.releasedFromHold ? now : retry.notBefore(message, now: now) ?? now
            // (Nothing held yet in this batch, the usual case: no lookup.)
            let due = heldUntil.isEmpty ? notBefore : max(notBefore, heldUntil[message.topicPartition] ?? notBefore)
            if due > now {
                if going == nil { going = Array(messages[..<index]) }
                heldUntil[message.topicPartition] = due
                consumer.hold(message, for: .milliseconds(due - now))
                continue
            }
            going?.append(message)
        }
        let batch = going ?? messages
        if !batch.isEmpty { dispatcher.handle(batch, settlement: KafkaRecordSettlement(consumer: consumer)) }
    }

    /// Settles the outcomes reached since the last turn (their offsets become storable) and frees those events, on the
    /// poll thread, which made them.
    package func consumerDidPoll(_ consumer: KafkaConsumer) {
        dispatcher.releaseFinished()
    }

    package func consumer(_ consumer: KafkaConsumer, didAssign partitions: [KafkaTopicPartition]) {
        dispatcher.assigned(lanes: callsPartitions(partitions))
        setReady(true)
        // Topics may have changed since start (partitions added): check again, off the poll thread.
        DispatchQueue.global().async { [self] in
            do throws(KafkaError) {
                try checkPartitionCounts(producer.partitionCounts(
                    of: configuration.subscribedTopics, timeout: configuration.metadataTimeout))
            } catch {
                logger.critical("kafka topics no longer fit together", metadata: ["error": error.reason])
                setReady(false)
                fatalHandler(error)
            }
        }
    }

    package func consumer(_ consumer: KafkaConsumer, didRevoke partitions: [KafkaTopicPartition]) {
        dispatcher.revoked(lanes: callsPartitions(partitions))
    }

    /// The calls topic's partition numbers among `partitions`: the read-ahead's lanes.
    private func callsPartitions(_ partitions: [KafkaTopicPartition]) -> [Int32] {
        partitions.filter { $0.topic == configuration.callsTopic }.map(\.partition)
    }

    /// Retry records keep their partition number, so every retry tier needs the calls topic's partition count.
    /// `counts` holds every subscribed topic's.
    private func checkPartitionCounts(_ counts: [String: Int]) throws(KafkaError) {
        let topics = configuration.subscribedTopics
        let calls = counts[configuration.callsTopic] ?? 0
        let mismatched = topics.dropFirst().filter { counts[$0] != calls }
        guard mismatched.isEmpty else {
            let listed = mismatched.map { "\($0) has \(counts[$0] ?? 0)" }.joined(separator: ", ")
            throw KafkaError(
                code: .configuration,
                reason: "topic \(configuration.callsTopic) has \(calls) partitions but \(listed): every retry tier needs "
                    + "the calls topic's partition count (a retry stays on its call's partition number)")
        }
    }

    package func consumer(_ consumer: KafkaConsumer, didFail error: KafkaError) {
        if error.code == .fencedInstanceID, let id = configuration.consumer.groupInstanceID {
            logger.critical("another worker joined the group with this worker's kafka.instance-id \(id): give every worker its own (a StatefulSet pod name)")
            setReady(false)
            fatalHandler(error)
        } else if error.code == .inconsistentGroupProtocol {
            logger.critical("the group's workers use the other kafka.rebalance protocol (\(configuration.consumer.rebalancing.rawValue) here): "
                + "every worker of a group must use the same one; change it with the whole group stopped")
            setReady(false)
            fatalHandler(error)
        } else if error.isFatal {
            logger.error("fatal kafka error", metadata: ["error": "\(error)"])
            setReady(false)
            fatalHandler(error)
        } else {
            logger.warning("kafka error", metadata: ["error": "\(error)"])
        }
    }
}
