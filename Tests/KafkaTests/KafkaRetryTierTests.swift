import Foundation
import Synchronization
@testable import Telemetry
import TestSupport
import Testing

@testable import Kafka

@Suite(.timeLimit(.minutes(2))) struct KafkaRetryTierTests {
    /// A retry-tier consumer holds a not-yet-due message and pauses its partition; nothing of that partition is
    /// processed before the due time, other partitions keep flowing, and the partition resumes afterwards.
    @Test func holdPausesPartitionUntilDue() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls.retry.2s")
        try cluster.createTopic(topic, partitions: 2)
        let registry = MetricsRegistry()

        struct Log {
            var completions: [(partition: Int32, value: String, at: ContinuousClock.Instant, released: Bool)] = []
            var holds = 0
        }
        let log = Mutex(Log())
        // Due 8 s after the partition's first record arrives (not after it is sent: with the whole suite running,
        // the sends alone once took most of that, and the pause was over before the test looked for it).
        let due = Mutex<ContinuousClock.Instant?>(nil)
        let delegate = RecordingDelegate { consumer, message in
            if message.partition == 0 {
                let dueAt = due.withLock { dueAt in
                    if dueAt == nil { dueAt = .now + .seconds(8) }
                    return dueAt!
                }
                if ContinuousClock.now < dueAt {
                    // Not due: hand it back, to be redelivered at the due time.
                    #expect(!message.releasedFromHold, "only a redelivery after a hold is marked")
                    #expect(consumer.hold(message, until: dueAt))
                    log.withLock { $0.holds += 1 }
                    return
                }
            }
            consumer.complete(message)
            log.withLock {
                $0.completions.append(
                    (message.partition, String(decoding: message.value, as: UTF8.self), .now, message.releasedFromHold))
            }
        }
        let consumer = try KafkaConsumer(
            topics: [topic],
            configuration: KafkaTestSupport.consumerConfiguration(cluster, group: KafkaTestSupport.uniqueName("g")),
            delegate: delegate,
            logger: KafkaTestSupport.logger,
            metrics: registry
        )
        #expect(await Eventually.waitUntil(timeout: .seconds(15)) { consumer.assignment.count == 2 })
        let producer = try KafkaProducer(
            configuration: KafkaTestSupport.producerConfiguration(cluster),
            logger: KafkaTestSupport.logger
        )
        // Warm the idempotent producer up first, so the due time's margin is not spent on its start-up.
        _ = try await producer.send(KafkaProducerRecord(topic: topic, partition: 1, value: Array("warm-up".utf8)))
        for index in 0..<3 {
            _ = try await producer.send(KafkaProducerRecord(topic: topic, partition: 0, value: Array("r\(index)".utf8)))
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { log.withLock { $0.holds } >= 1 })
        // The poll thread pauses the partition on its next turn after the hold, once: the counter keeps that.
        let pausesSeries = "callpush_kafka_partition_pauses_total{reason=\"retry_due\"}"
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) {
            ExpositionSeries.value(pausesSeries, in: registry.exposition()) == 1
        })
        // While it lasts, the partition and the gauge say why. This task can be starved past the due time when the
        // whole suite runs (CI saw both looks fail once, the test taking 81 s), so it looks only until then: a
        // look that came too late is told apart from a pause that was never shown.
        let partition0 = KafkaTopicPartition(topic: topic, partition: 0)
        var shown = (partition: false, gauge: false)
        let dueAt = try #require(due.withLock { $0 })
        let lookUntil = dueAt - .milliseconds(500)
        let lookedBeforeDue = ContinuousClock.now < lookUntil
        if lookedBeforeDue {
            await Eventually.waitUntil(timeout: lookUntil - ContinuousClock.now) {
                shown.partition = shown.partition || consumer.pausedPartitions[partition0] == "retry_due"
                shown.gauge = shown.gauge
                    || registry.exposition().contains("callpush_kafka_paused_partitions{reason=\"retry_due\"} 1")
                return shown.partition && shown.gauge
            }
            #expect(shown.partition, "partition 0 not reported paused for retry_due before its due time")
            #expect(shown.gauge, "callpush_kafka_paused_partitions{reason=\"retry_due\"} not 1 before the due time")
        }
        // The poll loop keeps running: partition 1 flows while partition 0 waits.
        for index in 0..<20 {
            _ = try await producer.send(KafkaProducerRecord(topic: topic, partition: 1, value: Array("m\(index)".utf8)))
        }
        let otherFlows = await Eventually.waitUntil(timeout: .seconds(5)) {
            log.withLock { $0.completions.filter { $0.partition == 1 }.count } == 21  // warm-up + 20
        }
        #expect(otherFlows)

        let allDone = await Eventually.waitUntil(timeout: .seconds(10)) {
            log.withLock { $0.completions.filter { $0.partition == 0 }.count } == 3
        }
        #expect(allDone)
        let retried = log.withLock { $0.completions.filter { $0.partition == 0 } }
        #expect(retried.map(\.value) == ["r0", "r1", "r2"])
        // The message the delegate held comes back marked (later ones may have been kept behind it, unmarked).
        #expect(retried.first?.released == true)
        #expect(log.withLock { $0.completions.filter { $0.partition == 1 }.allSatisfy { !$0.released } })
        for completion in retried {
            #expect(completion.at >= dueAt, "\(completion.value) processed before it was due")
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(2)) { consumer.pausedPartitions.isEmpty })
        #expect(consumer.inFlightCount == 0)
        await producer.close()
        await consumer.close()
    }

    /// A revoke drops held messages; they are not committed, so the next owner gets them.
    @Test func heldMessagesAreNotCommittedAcrossRestart() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls.retry.30s")
        try cluster.createTopic(topic, partitions: 1)
        let group = KafkaTestSupport.uniqueName("g")
        _ = try await KafkaTestSupport.produce(cluster, topic: topic, count: 5, partitions: 1)

        // First owner: completes offsets 0 and 1, holds offset 2 for a long time, then closes.
        let holder = RecordingDelegate { consumer, message in
            if message.offset < 2 {
                consumer.complete(message)
            } else {
                consumer.hold(message, for: .seconds(60))
            }
        }
        let first = try KafkaConsumer(
            topics: [topic],
            configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
            delegate: holder,
            logger: KafkaTestSupport.logger
        )
        #expect(await Eventually.waitUntil(timeout: .seconds(15)) { holder.receivedCount >= 3 })
        // Auto-commit (200 ms) commits offsets 0 and 1 before the close: the next owner starts at the held message.
        let committed = await Eventually.waitUntil(timeout: .seconds(30)) {
            KafkaTestSupport.hasCommitted(first, topic: topic, partitions: 1, upTo: 2)
        }
        #expect(committed, "\(KafkaTestSupport.lastCommits(first))")
        await first.close()
        #expect(holder.received.map(\.offset) == [0, 1, 2])

        let second = RecordingDelegate.completingImmediately()
        let next = try KafkaConsumer(
            topics: [topic],
            configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
            delegate: second,
            logger: KafkaTestSupport.logger
        )
        #expect(await Eventually.waitUntil(timeout: .seconds(15)) { second.receivedCount >= 3 })
        await next.close()
        #expect(second.received.map(\.offset) == [2, 3, 4])
    }

    /// A message given back stays unfinished (the next owner reads it again, and everything after it) while close
    /// does not wait for it: with a drain timeout of two minutes, close still returns.
    @Test func givenBackMessagesAreNotCommittedAndNotWaitedFor() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls")
        try cluster.createTopic(topic, partitions: 1)
        let group = KafkaTestSupport.uniqueName("g")
        _ = try await KafkaTestSupport.produce(cluster, topic: topic, count: 4, partitions: 1)
        let first = RecordingDelegate { consumer, message in
            if message.offset == 1 { consumer.giveBack(message) } else { consumer.complete(message) }
        }
        var configuration = KafkaTestSupport.consumerConfiguration(cluster, group: group)
        configuration.closeDrainTimeout = .seconds(120)
        let owner = try KafkaConsumer(topics: [topic], configuration: configuration, delegate: first, logger: KafkaTestSupport.logger)
        #expect(await Eventually.waitUntil(timeout: .seconds(15)) { first.receivedCount >= 4 })
        #expect(owner.inFlightCount == 1, "the given-back message stays unfinished")
        let closes = Tally()
        let closing = Task {
            await owner.close()
            closes.add()
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { closes.value == 1 }, "close did not wait for it")
        await closing.value

        let second = RecordingDelegate.completingImmediately()
        let next = try KafkaConsumer(topics: [topic], configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
                                     delegate: second, logger: KafkaTestSupport.logger)
        #expect(await Eventually.waitUntil(timeout: .seconds(15)) { second.receivedCount >= 3 })
        await next.close()
        #expect(second.received.map(\.offset) == [1, 2, 3])
    }
}
