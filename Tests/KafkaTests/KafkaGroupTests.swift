import Foundation
import Synchronization
@testable import Telemetry
import TestSupport
import Testing

@testable import Kafka

@Suite(.serialized, .timeLimit(.minutes(3))) struct KafkaGroupTests {
    enum Departure: String, CaseIterable, Sendable {
        case close
        case abandon
    }

    /// Two members split 8 partitions; one leaves (cleanly, or "killed" with work in flight); the other takes
    /// over. Every message is processed at least once and duplicates stay bounded.
    @Test(arguments: Departure.allCases)
    func twoMembersSplitAndTakeOver(_ departure: Departure) async throws {
        let partitions: Int32 = 8
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: partitions)
        defer { cluster.close() }
        let batch = 4000

        // Member 1 completes only even values at once; odd ones stay in flight until it leaves (so an abandon
        // leaves uncommitted work behind).
        let stuck = Mutex<[KafkaMessage]>([])
        let first = RecordingDelegate { consumer, message in
            if Int(String(decoding: message.value, as: UTF8.self))! % 2 == 0 {
                consumer.complete(message)
            } else {
                stuck.withLock { $0.append(message) }
            }
        }
        let second = RecordingDelegate.completingImmediately()
        let registry = MetricsRegistry()
        let consumer1 = try KafkaConsumer(
            topics: [topic],
            configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
            delegate: first,
            logger: KafkaTestSupport.logger,
            metrics: registry
        )
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: batch, partitions: partitions) == 0)
        #expect(await Eventually.waitUntil(timeout: .seconds(20)) { first.receivedCount >= batch })
        // Release odd ones now and then so the group makes progress; keep the tail in flight.
        let release = { @Sendable in
            let messages = stuck.withLock { stuck in defer { stuck.removeAll() }; return stuck }
            for message in messages { consumer1.complete(message) }
        }
        release()
        // Let auto-commit (200 ms) commit batch 1 before the group starts rebalancing: the 2.0.2 mock rejects
        // OffsetCommit with REBALANCE_IN_PROGRESS for the whole join window (real brokers accept commits of the
        // current generation then), so work done during a rebalance is redelivered.
        let committedBatch1 = await Eventually.waitUntil(timeout: .seconds(30)) {
            KafkaTestSupport.hasCommitted(consumer1, topic: topic, partitions: partitions, upTo: Int64(batch) / Int64(partitions))
        }
        #expect(committedBatch1, "batch 1 committed before the join: \(KafkaTestSupport.lastCommits(consumer1))")
        let deliveredBeforeJoin = first.receivedCount

        let consumer2 = try KafkaConsumer(
            topics: [topic],
            configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
            delegate: second,
            logger: KafkaTestSupport.logger
        )
        let split = await Eventually.waitUntil(timeout: .seconds(30)) {
            consumer1.assignment.count == 4 && consumer2.assignment.count == 4
        }
        #expect(split, "assignments \(consumer1.assignment) / \(consumer2.assignment)")
        #expect(Set(consumer1.assignment).isDisjoint(with: consumer2.assignment))

        #expect(
            try await KafkaTestSupport.produce(cluster, topic: topic, count: batch, partitions: partitions, startingAt: batch)
                == 0
        )
        let bothGotWork = await Eventually.waitUntil(timeout: .seconds(20)) {
            first.receivedCount + second.receivedCount >= 2 * batch
        }
        #expect(bothGotWork)
        #expect(second.receivedCount > 0)
        let inFlightAtDeparture = stuck.withLock { $0.count }

        switch departure {
        case .close:
            // Graceful: the drain waits for in-flight work, so release it from another thread meanwhile.
            Thread { usleep(200_000); release() }.start()
            await consumer1.close()
        case .abandon:
            await consumer1.abandon()
        }
        let takeover = await Eventually.waitUntil(timeout: .seconds(40)) { consumer2.assignment.count == 8 }
        #expect(takeover, "\(departure): member 2 owns \(consumer2.assignment.count) partitions")

        #expect(
            try await KafkaTestSupport.produce(cluster, topic: topic, count: batch, partitions: partitions, startingAt: 2 * batch)
                == 0
        )
        let everything = await Eventually.waitUntil(timeout: .seconds(30)) {
            let values = Set((first.received + second.received).map { String(decoding: $0.value, as: UTF8.self) })
            return values.count == 3 * batch
        }
        #expect(everything, "\(departure): every message processed at least once")
        await consumer2.close()

        let deliveries = first.received.count + second.received.count
        let duplicates = deliveries - 3 * batch
        // Duplicates come only from member 1's work that was not committed: what it did after member 2 joined
        // (commits are refused by the mock while the group rebalances) and, after an abandon, its uncommitted
        // tail. Nothing committed before the join is seen twice, and no message is delivered more than twice.
        let uncommittedWindow = first.received.count - deliveredBeforeJoin
        #expect(duplicates >= 0)
        #expect(duplicates <= uncommittedWindow, "duplicates \(duplicates), window \(uncommittedWindow)")
        var deliveriesPerValue: [String: Int] = [:]
        for message in first.received + second.received {
            deliveriesPerValue[String(decoding: message.value, as: UTF8.self), default: 0] += 1
        }
        #expect(deliveriesPerValue.values.max() ?? 0 <= 2)
        let firstBatchDuplicates = deliveriesPerValue.filter { Int($0.key)! < batch && $0.value > 1 }.count
        #expect(firstBatchDuplicates == 0)
        // Member 1 counts what member 2 reads again: what it read past each partition's last successful commit when
        // it gave the partition away (at the join, whose commits the mock refused, and at its departure). Exactly,
        // when it leaves; after an abandon a commit still on its way may land, so that count is an upper bound.
        let handedOver = Int(ExpositionSeries.value("callpush_kafka_uncommitted_handed_over_total", in: registry.exposition()) ?? -1)
        switch departure {
        case .close: #expect(handedOver == duplicates, "member 1 counted \(handedOver) handed over, member 2 read \(duplicates) again")
        case .abandon: #expect(handedOver >= duplicates, "member 1 counted \(handedOver) handed over, member 2 read \(duplicates) again")
        }
        print("group test \(departure): deliveries \(deliveries) duplicates \(duplicates) handed over \(handedOver) in flight at departure \(inFlightAtDeparture)")
    }

    /// Member 1 finishes batch 2 only when the rebalance member 2's join starts revokes its partitions, so the
    /// commit it makes on the revoke comes while the group rebalances, and the mock refuses it: the partitions that
    /// move are read again from batch 2 on by member 2, and member 1's `callpush_kafka_uncommitted_handed_over_total`
    /// says exactly how many messages that is. The first message of batch 2 in each partition it gives back instead
    /// (as the worker gives back what it has not sent): a partition that comes back to member 1 resumes there and reads
    /// the rest of batch 2 again too (delivered again, so the read-ahead sees any stop event among it), and counts it.
    @Test func handedOverCountsWhatTheNextOwnerReadsAgain() async throws {
        let partitions: Int32 = 4
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: partitions)
        defer { cluster.close() }
        let batch = 400
        let givenBack = batch..<(batch + Int(partitions))  // values go round-robin: one per partition
        let heldBack = Mutex<(held: [KafkaMessage], seen: Set<Int>)>(([], []))
        let first = RecordingDelegate { consumer, message in
            let value = Int(String(decoding: message.value, as: UTF8.self))!
            let hold = heldBack.withLock { state in
                guard value >= batch, state.seen.insert(value).inserted else { return false }
                state.held.append(message)
                return true
            }
            if !hold { consumer.complete(message) }
        }
        first.onRevoke = { consumer in
            for message in heldBack.withLock({ state in defer { state.held.removeAll() }; return state.held }) {
                if givenBack.contains(Int(String(decoding: message.value, as: UTF8.self))!) {
                    consumer.giveBack(message)
                } else {
                    consumer.complete(message)
                }
            }
        }
        let second = RecordingDelegate.completingImmediately()
        let registry = MetricsRegistry()
        // Eager: member 1 gives up every partition at member 2's join and gets two of them back.
        var eager = KafkaTestSupport.consumerConfiguration(cluster, group: group)
        eager.rebalancing = .eager
        let consumer1 = try KafkaConsumer(
            topics: [topic], configuration: eager, delegate: first, logger: KafkaTestSupport.logger, metrics: registry)
        #expect(try await KafkaTestSupport.produce(cluster, topic: topic, count: 2 * batch, partitions: partitions) == 0)
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { first.receivedCount == 2 * batch })
        // Auto-commit (200 ms) commits batch 1 (batch 2 is held back) before member 2 joins, so member 2 reads only
        // batch 2 again; the count is exact either way.
        let committedBatch1 = await Eventually.waitUntil(timeout: .seconds(30)) {
            KafkaTestSupport.hasCommitted(consumer1, topic: topic, partitions: partitions, upTo: Int64(batch) / Int64(partitions))
        }
        #expect(committedBatch1, "batch 1 committed before the join: \(KafkaTestSupport.lastCommits(consumer1))")
        eager.clientID = KafkaTestSupport.uniqueName("consumer")
        let consumer2 = try KafkaConsumer(
            topics: [topic], configuration: eager, delegate: second, logger: KafkaTestSupport.logger)
        let split = await Eventually.waitUntil(timeout: .seconds(30)) {
            consumer1.assignment.count == 2 && consumer2.assignment.count == 2
        }
        #expect(split, "assignments \(consumer1.assignment) / \(consumer2.assignment)")
        // Member 1 reads its two partitions again from the given-back messages before it leaves.
        let perPartition = batch / Int(partitions)
        let resumed = await Eventually.waitUntil(timeout: .seconds(30)) { first.receivedCount == 2 * batch + 2 * perPartition }
        #expect(resumed, "member 1 read \(first.receivedCount - 2 * batch) again after resuming")
        await consumer1.close()
        // One marker a partition after member 1 has left: once member 2 has read all four, it has read everything
        // before them, so whatever member 1 handed over has been read again.
        let markers = Set((2 * batch..<(2 * batch + Int(partitions))).map { Array(String($0).utf8) })
        #expect(try await KafkaTestSupport.produce(
            cluster, topic: topic, count: Int(partitions), partitions: partitions, startingAt: 2 * batch) == 0)
        let everything = await Eventually.waitUntil(timeout: .seconds(30)) {
            markers.isSubset(of: Set(second.received.map(\.value)))
        }
        #expect(everything, "member 2 read every partition to its end")
        await consumer2.close()

        let readAgain = first.received.count + second.received.count - 2 * batch - Int(partitions)
        let resumedReadAgain = first.received.count - 2 * batch
        let handedOver = Int(ExpositionSeries.value("callpush_kafka_uncommitted_handed_over_total", in: registry.exposition()) ?? -1)
        print("hand-over after a refused commit: read again \(readAgain) (by member 1 after resuming \(resumedReadAgain)), "
              + "member 1 counted \(handedOver)")
        #expect(readAgain > resumedReadAgain, "member 2 read nothing again: the commit on the revoke was not refused")
        #expect(resumedReadAgain == 200, "member 1 resumed 2 partitions at their given-back messages")
        #expect(handedOver == readAgain)
    }

    /// A revoke waits for in-flight messages that other threads complete meanwhile, and returns as soon as they
    /// are done (well before `revokeDrainTimeout`).
    @Test func revokeWaitsForCompletionsFromOtherThreads() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls")
        try cluster.createTopic(topic, partitions: 2)
        let group = KafkaTestSupport.uniqueName("g")
        var configuration = KafkaTestSupport.consumerConfiguration(cluster, group: group)
        configuration.revokeDrainTimeout = .seconds(60)

        final class Holder: KafkaConsumerDelegate {
            let inFlight = Mutex<[KafkaMessage]>([])
            let revokeStarted = Mutex<ContinuousClock.Instant?>(nil)
            func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) {
                inFlight.withLock { $0.append(message) }
            }
            func consumer(_ consumer: KafkaConsumer, didRevoke partitions: [KafkaTopicPartition]) {
                revokeStarted.withLock { $0 = $0 ?? .now }
                // Finish the in-flight work on another thread, a little later.
                let messages = inFlight.withLock { messages in defer { messages.removeAll() }; return messages }
                Thread {
                    usleep(300_000)
                    for message in messages { consumer.complete(message) }
                }.start()
            }
        }
        let delegate = Holder()
        let consumer1 = try KafkaConsumer(
            topics: [topic],
            configuration: configuration,
            delegate: delegate,
            logger: KafkaTestSupport.logger
        )
        _ = try await KafkaTestSupport.produce(cluster, topic: topic, count: 20, partitions: 2)
        #expect(await Eventually.waitUntil(timeout: .seconds(15)) { delegate.inFlight.withLock { $0.count } == 20 })
        #expect(consumer1.inFlightCount == 20)

        let consumer2 = try KafkaConsumer(
            topics: [topic],
            configuration: configuration,
            delegate: RecordingDelegate.completingImmediately(),
            logger: KafkaTestSupport.logger
        )
        let split = await Eventually.waitUntil(timeout: .seconds(30)) {
            consumer1.assignment.count == 1 && consumer2.assignment.count == 1
        }
        #expect(split, "the revoke did not return once its in-flight work was completed")
        #expect(delegate.revokeStarted.withLock { $0 } != nil)
        await consumer2.close()
        await consumer1.close()
    }

    /// Cooperative rebalancing with a companion topic (as the worker's retry tiers go with the calls topic): when a
    /// second member joins, the first gives up only the partitions that move, each with its companion partition of
    /// the same number, and never stops the others: it receives messages of the partitions it keeps while the group
    /// rebalances. Every assignment holds partition p of both topics or neither; the companion's offsets are
    /// committed through the group, so a member taking it over starts where the previous owner finished.
    @Test func cooperativeRebalancingMovesOnlyWhatChangesAndKeepsCompanionsTogether() async throws {
        let partitions: Int32 = 4
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: partitions)
        defer { cluster.close() }
        let companion = KafkaTestSupport.uniqueName("calls.retry")
        try cluster.createTopic(companion, partitions: Int(partitions))
        // Member 1 notes when each message reaches it (by the index its value carries), and when it gives partitions up.
        let deliveries = Mutex<[(at: ContinuousClock.Instant, partition: KafkaTopicPartition, index: Int?)]>([])
        let first = RecordingDelegate { consumer, message in
            let index = Int(String(decoding: message.value, as: UTF8.self))
            deliveries.withLock { $0.append((.now, message.topicPartition, index)) }
            consumer.complete(message)
        }
        let revokedAt = Mutex<ContinuousClock.Instant?>(nil)
        first.onRevoke = { _ in revokedAt.withLock { $0 = $0 ?? .now } }
        let second = RecordingDelegate.completingImmediately()
        let registry1 = MetricsRegistry()
        let registry2 = MetricsRegistry()
        func member(_ delegate: RecordingDelegate, metrics: MetricsRegistry = MetricsRegistry()) throws -> KafkaConsumer {
            try KafkaConsumer(topics: [topic], companionTopics: [companion],
                              configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
                              delegate: delegate, logger: KafkaTestSupport.logger, metrics: metrics)
        }
        func coLocated(_ owned: some Sequence<KafkaTopicPartition>) -> Bool {
            let byTopic = Dictionary(grouping: owned, by: \.topic).mapValues { Set($0.map(\.partition)) }
            return byTopic[topic, default: []] == byTopic[companion, default: []]
        }
        let consumer1 = try member(first, metrics: registry1)
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { consumer1.assignment.count == 2 * Int(partitions) })
        #expect(try await KafkaTestSupport.produce(cluster, topic: companion, count: 400, partitions: partitions) == 0)
        #expect(await Eventually.waitUntil(timeout: .seconds(20)) { first.receivedCount >= 400 })
        // Auto-commit (200 ms) commits the companion's offsets (100 a partition).
        let companionCommitted = await Eventually.waitUntil(timeout: .seconds(30)) {
            KafkaTestSupport.hasCommitted(consumer1, topic: companion, partitions: partitions, upTo: 400 / Int64(partitions))
        }
        #expect(companionCommitted, "\(KafkaTestSupport.lastCommits(consumer1))")

        // A steady trickle into every calls partition while member 2 joins; each record's index is noted with when the
        // cluster had acknowledged it (its batch's flush returned).
        let acknowledgedAt = Mutex<[Int: ContinuousClock.Instant]>([:])
        let producing = Task { @Sendable in
            var next = 0
            while !Task.isCancelled {
                _ = try? await KafkaTestSupport.produce(cluster, topic: topic, count: 8, partitions: partitions, startingAt: next)
                let now = ContinuousClock.now
                acknowledgedAt.withLock { for index in next..<(next + 8) { $0[index] = now } }
                next += 8
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        let consumer2 = try member(second, metrics: registry2)
        let split = await Eventually.waitUntil(timeout: .seconds(40)) {
            consumer1.assignment.count == Int(partitions) && consumer2.assignment.count == Int(partitions)
        }
        // The trickle goes on until its batches acknowledged after the revoke span two seconds, however long a batch
        // takes on a loaded machine (the window below needs records in it).
        @Sendable func acknowledgedAfterRevoke() -> ClosedRange<ContinuousClock.Instant>? {
            guard let revoke = revokedAt.withLock({ $0 }) else { return nil }
            let after = acknowledgedAt.withLock { $0.values.filter { $0 > revoke } }
            guard let first = after.min(), let last = after.max() else { return nil }
            return first...last
        }
        let trickled = await Eventually.waitUntil(timeout: .seconds(40)) {
            acknowledgedAfterRevoke().map { $0.upperBound - $0.lowerBound >= .seconds(2) } ?? false
        }
        producing.cancel()
        _ = await producing.value
        #expect(split, "assignments \(consumer1.assignment) / \(consumer2.assignment)")
        #expect(trickled, "batches acknowledged after the revoke: \(String(describing: acknowledgedAfterRevoke()))")
        #expect(coLocated(consumer1.assignment) && coLocated(consumer2.assignment),
                "\(consumer1.assignment) / \(consumer2.assignment)")
        #expect(Set(consumer1.assignment).isDisjoint(with: consumer2.assignment))
        let revoked = first.snapshot.withLock { $0.revoked.flatMap { $0 } }
        #expect(Set(revoked) == Set(consumer2.assignment), "member 1 gave up exactly what member 2 took: \(revoked)")
        #expect(first.snapshot.withLock { $0.assigned.dropFirst().allSatisfy(\.isEmpty) }, "member 1 was never assigned anew")
        // Member 2 started the companion partitions it took where member 1 had committed: it reads none of the 400.
        #expect(!second.received.contains { $0.topic == companion })
        // The first call of each calls partition member 2 took had its wait observed (the companion's are not).
        let observed = await Eventually.waitUntil(timeout: .seconds(10)) {
            ExpositionSeries.value("callpush_kafka_assignment_wait_seconds_count", in: registry2.exposition()) == Double(partitions / 2)
        }
        #expect(observed, "\(ExpositionSeries.value("callpush_kafka_assignment_wait_seconds_count", in: registry2.exposition()) ?? -1)")
        // The partitions member 1 kept go on at once: librdkafka paused its whole assignment while each rebalance
        // callback was pending and resumed it without waking the broker threads, so without the consumer's wake-up
        // their next fetch came up to a second later. Measured from each record's acknowledgement, not from the
        // revoke: the trickle itself pauses at times (a new producer per batch), and a partition with nothing new to
        // read is not a stalled one.
        let wakeups = ExpositionSeries.value("callpush_kafka_fetch_wakeups_total{reason=\"rebalanced\"}", in: registry1.exposition())
        #expect((wakeups ?? 0) >= 1, "\(wakeups ?? -1)")
        let kept = Set(consumer1.assignment.filter { $0.topic == topic })
        let revoke = try #require(revokedAt.withLock { $0 })
        let windowStart = try #require(acknowledgedAfterRevoke()).lowerBound
        let acknowledged = acknowledgedAt.withLock { $0 }.filter { $0.value > revoke && $0.value < windowStart + .seconds(2) }
        // Every record of a kept partition acknowledged in the trickle's first two seconds after the revoke reaches
        // member 1; per kept partition, the longest any of them waited.
        let keptIndexes = Set(acknowledged.keys.filter {
            kept.contains(KafkaTopicPartition(topic: topic, partition: Int32($0 % Int(partitions))))
        })
        let delivered = await Eventually.waitUntil(timeout: .seconds(10)) {
            keptIndexes.isSubset(of: deliveries.withLock { Set($0.filter { $0.partition.topic == topic }.compactMap(\.index)) })
        }
        #expect(delivered && !keptIndexes.isEmpty, "\(keptIndexes.count) records of kept partitions in the window")
        let longestWaits = deliveries.withLock { deliveries in
            kept.map { partition in
                deliveries.compactMap { delivery -> Duration? in
                    guard delivery.partition == partition, let index = delivery.index, let at = acknowledged[index]
                    else { return nil }
                    return max(.zero, delivery.at - at)
                }.max()
            }
        }
        #expect(!kept.isEmpty && longestWaits.allSatisfy { $0 != nil && $0! < .milliseconds(400) },
                "longest wait of a record acknowledged in the trickle's two seconds after the revoke, per kept partition: \(longestWaits)")
        await consumer2.close()
        await consumer1.close()
    }

    /// Cooperative rebalancing hands partitions to a joining member in two rounds: the old owner gives them up in the
    /// first, then rejoins so that the second gives them to the new one. When the second round does not come (here
    /// the broker goes down at the old owner's first-round assignment, before the group can hold the second), the old
    /// owner reports it overdue (`callpush_kafka_rebalance_round_overdue` 1, an error log line), and clears it when
    /// the round comes.
    @Test func anOverdueSecondRoundIsReportedAndClearedWhenItComes() async throws {
        let (cluster, topic, group) = try KafkaTestSupport.groupCluster(partitions: 4)
        defer { cluster.close() }
        var configuration = KafkaTestSupport.consumerConfiguration(cluster, group: group)
        configuration.secondRoundTimeout = .seconds(3)
        let registry = MetricsRegistry()
        let first = FirstRoundHook {
            try? ChildProcess.withNoneStarting { () throws(KafkaError) in try cluster.setBrokerDown(1) }
        }
        let consumer1 = try KafkaConsumer(
            topics: [topic], configuration: configuration, delegate: first, logger: KafkaTestSupport.logger, metrics: registry)
        #expect(await Eventually.waitUntil(timeout: .seconds(20)) { consumer1.assignment.count == 4 })
        #expect(ExpositionSeries.value("callpush_kafka_rebalance_round_overdue", in: registry.exposition()) == 0)

        let consumer2 = try KafkaConsumer(
            topics: [topic], configuration: KafkaTestSupport.consumerConfiguration(cluster, group: group),
            delegate: RecordingDelegate.completingImmediately(), logger: KafkaTestSupport.logger)
        let overdue = await Eventually.waitUntil(timeout: .seconds(40)) {
            ExpositionSeries.value("callpush_kafka_rebalance_round_overdue", in: registry.exposition()) == 1
        }
        #expect(overdue)
        #expect(first.fired && consumer1.assignment.count == 2 && consumer2.assignment.isEmpty,
                "the second round came: \(consumer1.assignment) / \(consumer2.assignment)")
        try cluster.setBrokerUp(1)
        let settled = await Eventually.waitUntil(timeout: .seconds(40)) {
            consumer1.assignment.count + consumer2.assignment.count == 4 && !consumer2.assignment.isEmpty
                && ExpositionSeries.value("callpush_kafka_rebalance_round_overdue", in: registry.exposition()) == 0
        }
        #expect(settled, "\(consumer1.assignment) / \(consumer2.assignment)")
        await consumer2.close()
        await consumer1.close()
    }

    /// Completes every message at once; at the first assignment that follows a revoke (a cooperative first round's),
    /// runs `afterFirstRound` once, on the poll thread.
    final class FirstRoundHook: KafkaConsumerDelegate {
        private let state = Mutex((revoked: false, fired: false))
        private let afterFirstRound: @Sendable () -> Void

        init(afterFirstRound: @escaping @Sendable () -> Void) { self.afterFirstRound = afterFirstRound }

        var fired: Bool { state.withLock { $0.fired } }

        func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage) { consumer.complete(message) }

        func consumer(_ consumer: KafkaConsumer, didRevoke partitions: [KafkaTopicPartition]) {
            state.withLock { $0.revoked = true }
        }

        func consumer(_ consumer: KafkaConsumer, didAssign partitions: [KafkaTopicPartition]) {
            let fire = state.withLock { state in
                guard state.revoked, !state.fired else { return false }
                state.fired = true
                return true
            }
            if fire { afterFirstRound() }
        }
    }
}
