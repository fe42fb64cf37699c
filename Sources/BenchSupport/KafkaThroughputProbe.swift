import HTTP2
package import Kafka
import Synchronization
import Telemetry

/// Measures in-process produce and consume rates against an embedded ``KafkaMockCluster``; used by the
/// benchmark executable and by the gated measurement test.
package enum KafkaThroughputProbe {
    package struct Result: Sendable {
        package var messages: Int
        /// Records enqueued and acknowledged per second (idempotent producer, `acks=all`).
        package var producedPerSecond: Double
        /// Records delivered to the delegate and completed per second (group consumer, poll thread).
        package var consumedPerSecond: Double
        /// Records whose delivery report failed (expected 0).
        package var failedDeliveries: Int
        /// Records the consumer delivered before the timeout (expected `messages`).
        package var consumed: Int
        /// CPU seconds (user + system) of this process while producing, until every record was acknowledged.
        package var produceCPUSeconds: Double
        /// CPU seconds of this process from the first record consumed to the last.
        package var consumeCPUSeconds: Double
        /// The longest time between two deliveries to the delegate while reading: milliseconds when records flow;
        /// about a second when fetching stalled (librdkafka 2.0.2's wait on a full local queue, which the consumer
        /// now avoids: `KafkaFetchWakeup`).
        package var consumeLongestPauseSeconds: Double
    }

    /// Produces `messages` records of `valueSize` bytes over `partitions` partitions, then consumes them all with
    /// one group consumer that completes each on the poll thread.
    ///
    /// With `bootstrapServers` the records go to `topic` on that (external) cluster, which must have `partitions`
    /// partitions; the CPU figures are then the clients' alone. Without it an embedded mock cluster is created.
    ///
    /// - Important: librdkafka 2.0.2's mock broker keeps only about 5 MB per partition and silently drops the
    ///   oldest records beyond that; keep `messages * (valueSize + ~40) / partitions` below that, or the consumer
    ///   sees fewer records (reported in ``Result/consumed``).
    package static func run(
        messages: Int = 200_000,
        partitions: Int = 16,
        valueSize: Int = 200,
        consumerProperties: [String: String] = [:],
        bootstrapServers: String? = nil,
        topic: String = "probe",
        timeout: Duration = .seconds(120)
    ) async throws(KafkaError) -> Result {
        let cluster = bootstrapServers == nil ? try KafkaMockCluster(brokers: 1) : nil
        defer { cluster?.close() }
        try cluster?.createTopic(topic, partitions: partitions)
        let servers = bootstrapServers ?? cluster?.bootstrapServers ?? ""
        let logger = Logger.disabled

        var producerConfiguration = KafkaProducerConfiguration()
        producerConfiguration.bootstrapServers = servers
        producerConfiguration.compression = "none"
        producerConfiguration.queueBufferingMaxMessages = 500_000
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        // Before the clock, as kcat's start-up and metadata time is subtracted from its run.
        try producer.prepare(topics: [topic])
        // The records and their one completion are made before the clock, as kcat's input file is written before
        // its run: the rate is the producer's.
        let value = [UInt8](repeating: 0x61, count: valueSize)
        let records = (0..<messages).map { index in
            KafkaProducerRecord(topic: topic, partition: Int32(index % partitions), key: Array(String(index).utf8), value: value)
        }
        let failures = ProbeCounter()
        let delivered: KafkaProducer.Completion = { result in
            if case .failure = result { failures.add(1, ordering: .relaxed) }
        }
        let produceStart = ContinuousClock.now
        let produceCPUStart = processCPUSeconds()
        for record in records {
            while true {
                do {
                    try producer.produce(record, completion: delivered)
                    break
                } catch {
                    guard error.code == KafkaError.Code.queueFull else { throw error }
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
        }
        _ = await producer.flush(timeout: timeout)
        let produceElapsed = ContinuousClock.now - produceStart
        let produceCPU = processCPUSeconds() - produceCPUStart
        await producer.close()

        let delegate = ProbeDelegate()
        var consumerConfiguration = KafkaConsumerConfiguration()
        consumerConfiguration.bootstrapServers = servers
        consumerConfiguration.groupID = "probe"
        consumerConfiguration.sessionTimeout = .seconds(6)
        consumerConfiguration.statisticsInterval = .zero
        consumerConfiguration.additionalProperties = consumerProperties
        let consumer = try KafkaConsumer(
            topics: [topic],
            configuration: consumerConfiguration,
            delegate: delegate,
            logger: logger
        )
        let deadline = ContinuousClock.now + timeout
        while delegate.count.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        let consumeStart = ContinuousClock.now
        let consumeCPUStart = processCPUSeconds()
        var lastCount = 0
        var lastProgress = ContinuousClock.now
        while delegate.count.load(ordering: .relaxed) < messages, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
            let count = delegate.count.load(ordering: .relaxed)
            if count != lastCount {
                lastCount = count
                lastProgress = .now
            } else if ContinuousClock.now - lastProgress > .seconds(2) {
                break  // nothing more is coming (e.g. the mock's retention dropped records)
            }
        }
        let consumeElapsed = lastProgress - consumeStart
        let consumeCPU = processCPUSeconds() - consumeCPUStart
        await consumer.close()
        return Result(
            messages: messages,
            producedPerSecond: Double(messages) / produceElapsed.inSeconds,
            consumedPerSecond: Double(delegate.count.load(ordering: .relaxed) - 1) / consumeElapsed.inSeconds,
            failedDeliveries: failures.load(ordering: .relaxed),
            consumed: delegate.count.load(ordering: .relaxed),
            produceCPUSeconds: produceCPU,
            consumeCPUSeconds: consumeCPU,
            consumeLongestPauseSeconds: delegate.arrivals.withLock { $0.longestPause }.inSeconds
        )
    }

    private typealias ProbeCounter = AtomicCounter

    private final class ProbeDelegate: KafkaConsumerDelegate {
        let count = Atomic<Int>(0)
        /// The last delivery and the longest time between two.
        let arrivals = Mutex<(last: ContinuousClock.Instant?, longestPause: Duration)>((nil, .zero))

        func consumer(_ consumer: KafkaConsumer, didReceive messages: [KafkaMessage]) {
            for message in messages { consumer.complete(message) }
            let now = ContinuousClock.now
            arrivals.withLock { arrivals in
                if let last = arrivals.last { arrivals.longestPause = max(arrivals.longestPause, now - last) }
                arrivals.last = now
            }
            count.add(messages.count, ordering: .relaxed)
        }

        func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) {
            consumer.complete(message)
            count.add(1, ordering: .relaxed)
        }
    }
}

/// An `Atomic<Int>` in a class, so escaping closures can share it.
final class AtomicCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ amount: Int, ordering: AtomicUpdateOrdering) { value.add(amount, ordering: .relaxed) }
    func load(ordering: AtomicLoadOrdering) -> Int { value.load(ordering: .relaxed) }
}
