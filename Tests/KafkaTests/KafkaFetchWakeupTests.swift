import Foundation
import Synchronization
import Telemetry
import TestSupport
import Testing

@testable import Kafka

@Suite(.timeLimit(.minutes(2))) struct KafkaFetchWakeupTests {
    // MARK: - The policy

    @Test func wakesOnceWhenAQueueThatReachedTheLimitHasDrainedToHalf() {
        var wakeup = KafkaFetchWakeup(messageLimit: 1000, byteLimit: 1 << 30, margin: 100)
        #expect(!observe(&wakeup, queueLength: 850, takenMessages: 100, takenBytes: 1000))
        #expect(!wakeup.armed)
        // Within one batch of the limit: the fetcher may have stopped.
        #expect(!observe(&wakeup, queueLength: 900, takenMessages: 100, takenBytes: 1000))
        #expect(wakeup.armed)
        #expect(!observe(&wakeup, queueLength: 700, takenMessages: 100, takenBytes: 1000))
        #expect(observe(&wakeup, queueLength: 500, takenMessages: 100, takenBytes: 1000))
        #expect(!wakeup.armed)
        // Once per time the queue was full.
        #expect(!observe(&wakeup, queueLength: 0, takenMessages: 100, takenBytes: 1000))
        #expect(!observe(&wakeup, queueLength: 0, takenMessages: 0, takenBytes: 0))
    }

    @Test func estimatesTheQueuesBytesFromTheMessagesTaken() {
        // 10 KB bound, 100-byte messages: 100 queued messages are the limit, though the message bound is far.
        var wakeup = KafkaFetchWakeup(messageLimit: 100_000, byteLimit: 10_000, margin: 10)
        #expect(!observe(&wakeup, queueLength: 95, takenMessages: 10, takenBytes: 1000))
        #expect(wakeup.armed)
        #expect(!observe(&wakeup, queueLength: 60, takenMessages: 10, takenBytes: 1000))
        #expect(observe(&wakeup, queueLength: 50, takenMessages: 10, takenBytes: 1000))
    }

    @Test func aConsumerSlowerThanTheFetcherNeverWakesIt() {
        // The fetcher refills the queue before it drains to half: nothing to do.
        var wakeup = KafkaFetchWakeup(messageLimit: 1000, byteLimit: 1 << 30, margin: 100)
        for length in [950, 900, 850, 800, 1000, 950, 900, 850, 800, 760] {
            #expect(!observe(&wakeup, queueLength: length, takenMessages: 50, takenBytes: 500))
        }
    }

    @Test func takesTheLimitsFromTheRenderedConfiguration() {
        var configuration = KafkaConsumerConfiguration()
        #expect(configuration.fetchWakeup.messageLimit == 100_000)
        #expect(configuration.fetchWakeup.byteLimit == 65_536 * 1024)
        #expect(configuration.fetchWakeup.margin == configuration.deliveryBatchSize)
        configuration.queuedMinMessages = 2000
        configuration.additionalProperties["queued.max.messages.kbytes"] = "1024"
        #expect(configuration.fetchWakeup.messageLimit == 2000)
        #expect(configuration.fetchWakeup.byteLimit == 1024 * 1024)
        configuration.additionalProperties["queued.min.messages"] = "3000"
        #expect(configuration.fetchWakeup.messageLimit == 3000)
    }

    /// `observe` outside `#expect`, whose expansion cannot call a mutating method.
    private func observe(_ wakeup: inout KafkaFetchWakeup, queueLength: Int, takenMessages: Int, takenBytes: Int) -> Bool {
        wakeup.observe(queueLength: queueLength, takenMessages: takenMessages, takenBytes: takenBytes)
    }

    // MARK: - Against librdkafka

    /// A backlog many times `queued.min.messages`: librdkafka 2.0.2 stops fetching each time the group consumer's
    /// queue holds that many and, left alone, looks again up to 1 s later — 20 refills would take seconds. With the
    /// wake-up the fetcher resumes while the consumer works through the queue.
    @Test func aBacklogOfManyQueueFillsIsReadWithoutSecondLongStalls() async throws {
        let records = 40_000
        let delegate = ArrivalDelegate()
        let (done, registry) = try await consumeBacklog(records: records, partitions: 4, delegate: delegate) {
            $0.queuedMinMessages = 2000
        }
        #expect(done)
        #expect(delegate.count == records)
        let count = Self.counter(registry, "callpush_kafka_fetch_wakeups_total{reason=\"queue_drained\"}")
        // How often the queue fills depends on how far fetching runs ahead of this (debug-built) consumer; it does fill.
        #expect(count >= 1, "fetch wake-ups after a drained queue \(count)")
        // The longest gap between two batches: about a second whenever the fetcher waits for itself.
        #expect(delegate.longestGap < .milliseconds(700), "longest gap \(delegate.longestGap)")
    }

    /// A partition paused for back-pressure and resumed: librdkafka 2.0.2 applies the resume on its main thread and
    /// does not wake the broker thread, which — with nothing else to fetch there — sleeps up to 1 s before it fetches
    /// the partition again. One partition on one broker, completions a few milliseconds after each batch and a
    /// limit of 200 in flight: about twenty pause/resume turns, each one a stall of up to a second unless the
    /// consumer wakes the broker thread when it resumes.
    @Test func aPartitionResumedAfterBackPressureIsFetchedAgainAtOnce() async throws {
        let records = 4000
        let pausesSeries = "callpush_kafka_partition_pauses_total{reason=\"backpressure\"}"
        let wakeupsSeries = "callpush_kafka_fetch_wakeups_total{reason=\"resumed\"}"
        let delegate = ArrivalDelegate(completionDelay: .milliseconds(3))
        // One wake-up per resume; the last resume is followed by no pause, so its partition also gets the second
        // wake-up an offset-store interval (20 ms here) later: the run settles once there are more wake-ups than pauses.
        let (done, registry) = try await consumeBacklog(
            records: records, partitions: 1, delegate: delegate,
            configure: { $0.backPressure.maxInFlightPerPartition = 200 },
            settled: { Self.counter($0, wakeupsSeries) > Self.counter($0, pausesSeries) })
        #expect(done)
        #expect(delegate.count == records)
        let pauses = Self.counter(registry, pausesSeries)
        let wakeups = Self.counter(registry, wakeupsSeries)
        #expect(pauses >= 5, "back-pressure pauses \(pauses)")
        #expect(wakeups > pauses, "wake-ups after a resume \(wakeups), pauses \(pauses)")
        #expect(delegate.longestGap < .milliseconds(700), "longest gap \(delegate.longestGap)")
    }

    /// Produces `records` records over `partitions` partitions of a fresh topic on a one-broker mock cluster and
    /// consumes them with `delegate` and a consumer set up by `configure`, until all arrived (at most 60 s) and
    /// `settled` holds (at most 5 s more); then closes the consumer.
    /// - Returns: whether all arrived, and the consumer's registry.
    private func consumeBacklog(
        records: Int, partitions: Int, delegate: ArrivalDelegate,
        configure: (inout KafkaConsumerConfiguration) -> Void,
        settled: (MetricsRegistry) -> Bool = { _ in true }
    ) async throws -> (Bool, MetricsRegistry) {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("backlog")
        try cluster.createTopic(topic, partitions: partitions)
        let failures = try await KafkaTestSupport.produce(cluster, topic: topic, count: records, partitions: Int32(partitions))
        #expect(failures == 0)

        let registry = MetricsRegistry()
        var configuration = KafkaTestSupport.consumerConfiguration(cluster, group: KafkaTestSupport.uniqueName("g"))
        configure(&configuration)
        let consumer = try KafkaConsumer(
            topics: [topic], configuration: configuration, delegate: delegate, logger: KafkaTestSupport.logger,
            metrics: registry)
        let done = await Eventually.waitUntil(timeout: .seconds(60)) { delegate.count >= records }
        _ = await Eventually.waitUntil(timeout: .seconds(5)) { settled(registry) }
        await consumer.close()
        return (done, registry)
    }

    private static func counter(_ registry: MetricsRegistry, _ series: String) -> Int {
        Int(ExpositionSeries.value(series, in: registry.exposition()) ?? 0)
    }
}

/// Counts messages and the longest time between two consecutive batches; completes each batch at once or, with a
/// `completionDelay`, that long after it arrived (so messages stay in flight and back-pressure engages).
private final class ArrivalDelegate: KafkaConsumerDelegate {
    private struct Arrivals {
        var count = 0
        var last: ContinuousClock.Instant?
        var longestGap = Duration.zero
    }

    private let arrivals = Mutex(Arrivals())
    private let completionDelay: Duration?

    init(completionDelay: Duration? = nil) {
        self.completionDelay = completionDelay
    }

    var count: Int { arrivals.withLock { $0.count } }
    var longestGap: Duration { arrivals.withLock { $0.longestGap } }

    func consumer(_ consumer: KafkaConsumer, didReceive messages: [KafkaMessage]) {
        let now = ContinuousClock.now
        arrivals.withLock { arrivals in
            if let last = arrivals.last { arrivals.longestGap = max(arrivals.longestGap, now - last) }
            arrivals.last = now
            arrivals.count += messages.count
        }
        guard let completionDelay else {
            for message in messages { consumer.complete(message) }
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + completionDelay.inSeconds) {
            for message in messages { consumer.complete(message) }
        }
    }

    func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) {
        consumer.complete(message)
        arrivals.withLock { $0.count += 1 }
    }
}
