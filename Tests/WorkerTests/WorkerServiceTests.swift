@testable import APNs
import Foundation
import Synchronization
@testable import Kafka
@testable import Telemetry
import TestSupport
import Testing

@testable import Worker

@Suite(.serialized) struct WorkerServiceTests {
    /// The group errors a broker sends when two workers share a `kafka.instance-id` (the older is fenced) or when a
    /// worker's `kafka.rebalance` protocol is not the group's: each stops the worker (readiness off, the fatal handler
    /// called, so `run` exits and is restarted) with one line that names the setting. Neither embedded cluster sends
    /// them (both mocks ignore instance ids; a mixed-protocol group aborts both), so the errors are handed to the
    /// worker as its consumer would.
    @Test(arguments: [
        (KafkaError.Code.fencedInstanceID, "another worker joined the group with this worker's kafka.instance-id pod-1"),
        (KafkaError.Code.inconsistentGroupProtocol, "the group's workers use the other kafka.rebalance protocol (cooperative here)"),
    ])
    func aFencedOrMismatchedMemberStopsWithOneLineNamingTheSetting(code: KafkaError.Code, line: String) async throws {
        let harness = try PipelineHarness()
        let log = RecordingLogSink()
        let fatal = Mutex<[KafkaError.Code]>([])
        let readiness = ReadinessFlag(ready: true)
        var configuration = harness.configuration
        configuration.consumer.groupInstanceID = "pod-1"
        let worker = try WorkerService(
            configuration: configuration, sender: ScriptedSender(), timers: harness.loops, registry: MetricsRegistry(), readiness: readiness,
            logger: Logger(label: "test", level: .info, sink: log), onFatalError: { error in fatal.withLock { $0.append(error.code) } })
        let consumer = try KafkaConsumer(topics: ["calls"], configuration: harness.configuration.consumer, delegate: worker,
                                         logger: .disabled)
        worker.consumer(consumer, didFail: KafkaError(code: code, reason: "from the broker", isFatal: true))
        #expect(fatal.withLock { $0 } == [code])
        #expect(!readiness.isReady)
        let critical = log.lines.filter { $0.contains(#""level":"critical""#) }
        #expect(critical.count == 1 && critical.first?.contains(line) == true, "\(log.lines)")
        await consumer.close()
    }

    /// A sender that answers 200 from another thread, as the APNs client's event loops do.
    final class AnsweringElsewhere: PushSender {
        func send(_ pushes: [APNsPush]) {
            for push in pushes { DispatchQueue.global().async { push.answered(.ok) } }
        }
    }

    /// Outcomes are settled on the poll thread, a turn at a time: at the in-flight limit the first outcome after a
    /// turn wakes the poll thread, so intake resumes as answers arrive, not at the poll's next timeout (2 s here).
    /// Measured on 2026-12-04: 80 events in 0.04 s, against 4.0 s (two poll timeouts) without the wake-up.
    @Test func backPressureLiftsAsAnswersArriveNotAtThePollTimeout() async throws {
        let harness = try PipelineHarness()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let count = 80
        // Ringing for 5 minutes: the worker's start and group join took 25 s once beside the whole suite.
        try await harness.produce((0..<count).map {
            ("c\($0)", Fixtures.eventJSON(eventID: UUID().uuidString, callID: "c\($0)", createdAt: now, ringTimeout: 300))
        })
        let registry = MetricsRegistry()
        let worker = try harness.makeWorker(sender: AnsweringElsewhere(), registry: registry) {
            $0.consumer.backPressure.maxInFlight = 2
            $0.consumer.pollTimeout = .seconds(2)
        }
        let delivered = { PipelineHarness.outcomes(registry)[.delivered] ?? 0 }
        #expect(await Eventually.waitUntil(timeout: .seconds(120)) { delivered() > 0 })
        let first = ContinuousClock.now
        let all = await Eventually.waitUntil(timeout: .seconds(60)) { delivered() == count }
        let took = ContinuousClock.now - first
        print("\(count) events at an in-flight limit of 2: the last delivered \(took) after the first")
        #expect(all, "\(PipelineHarness.outcomes(registry))")
        #expect(took < .milliseconds(1500), "a pause lasted until a poll timeout")
        await worker.shutdown()
    }

    /// Retries keep their partition number, so a retry tier with another partition count is refused at start.
    @Test func aRetryTierWithAnotherPartitionCountIsRefused() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        var configuration = WorkerConfiguration()
        configuration.consumer.bootstrapServers = cluster.bootstrapServers
        configuration.producer.bootstrapServers = cluster.bootstrapServers
        for topic in configuration.allTopics {
            try cluster.createTopic(topic, partitions: topic == "calls.retry.30s" ? 2 : 4)
        }
        let worker = try WorkerService(configuration: configuration, sender: ScriptedSender(), timers: ManualWallClock(), registry: MetricsRegistry(),
                                       logger: Logger(label: "test", level: .critical))
        #expect {
            try worker.start()
        } throws: { error in
            let kafka = error as? KafkaError
            return kafka?.code == .configuration
                && kafka?.reason.hasPrefix("topic calls has 4 partitions but calls.retry.30s has 2: every retry tier") == true
        }
    }

    /// A subscribed topic the cluster lacks is refused at start, by name; an output topic it lacks is not (clusters
    /// that create topics on demand make it at the first record).
    @Test func aMissingSubscribedTopicIsRefusedAndAMissingOutputTopicIsNot() async throws {
        for missing in ["calls.retry.30s", "calls.dlq"] {
            let cluster = try KafkaMockCluster(brokers: 1)
            defer { cluster.close() }
            var configuration = WorkerConfiguration()
            configuration.consumer.bootstrapServers = cluster.bootstrapServers
            configuration.producer.bootstrapServers = cluster.bootstrapServers
            for topic in configuration.allTopics where topic != missing {
                try cluster.createTopic(topic, partitions: 4)
            }
            let worker = try WorkerService(configuration: configuration, sender: ScriptedSender(), timers: ManualWallClock(),
                                           registry: MetricsRegistry(), logger: Logger(label: "test", level: .critical))
            if configuration.subscribedTopics.contains(missing) {
                #expect {
                    try worker.start()
                } throws: { error in
                    (error as? KafkaError)?.code == .unknownTopicOrPartition
                        && (error as? KafkaError)?.reason == "topic \(missing) does not exist"
                }
            } else {
                try worker.start()
            }
            await worker.shutdown()
        }
    }

    @Test func everyOutcomePathThroughKafka() async throws {
        let harness = try PipelineHarness()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let failOnce = FailFirst()
        let sender = ScriptedSender { request in
            let payload = String(decoding: request.payload, as: UTF8.self)
            if payload.contains("dead-token") { return .unregistered }
            if payload.contains("flaky") { return failOnce.answer(for: payload) }
            if payload.contains("rejected") { return APNsResult(disposition: .permanent, status: 400, reason: "BadTopic") }
            return .ok
        }
        let registry = MetricsRegistry()
        let worker = try harness.makeWorker(sender: sender, registry: registry)
        var events: [(String, String)] = []
        events.append(("c-ok", Fixtures.eventJSON(eventID: "e-ok", callID: "c-ok", createdAt: now)))
        events.append(("c-dead", Fixtures.eventJSON(eventID: "e-dead", callID: "c-dead", createdAt: now, extra: ",\"custom\":{\"tag\":\"dead-token\"}")))
        events.append(("c-flaky", Fixtures.eventJSON(eventID: "e-flaky", callID: "c-flaky", createdAt: now, extra: ",\"custom\":{\"tag\":\"flaky\"}")))
        events.append(("c-rej", Fixtures.eventJSON(eventID: "e-rej", callID: "c-rej", createdAt: now, extra: ",\"custom\":{\"tag\":\"rejected\"}")))
        events.append(("c-old", Fixtures.eventJSON(eventID: "e-old", callID: "c-old", createdAt: now - 120_000)))
        events.append(("c-bad", "{not json"))
        try await harness.produce(events.map { (callID: $0.0, json: $0.1) })
        // 6 consumed from calls + 1 redelivered from the retry tier.
        let finished = await Eventually.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry).total >= 7 }
        #expect(finished)
        let outcomes = PipelineHarness.outcomes(registry)
        #expect(outcomes[.delivered] == 2)  // e-ok, and e-flaky on its second attempt
        #expect(outcomes[.invalidated] == 1)
        #expect(outcomes[.retried] == 1)
        #expect(outcomes[.deadLettered] == 2)
        #expect(outcomes[.expired] == 1)
        let invalidated = try await harness.read(["apns.tokens.invalidated"], atLeast: 1)
        #expect(invalidated.count == 1)
        let invalidation = try #require(invalidated.first.flatMap { try JSONSerialization.jsonObject(with: Data($0.value)) as? [String: Any] })
        #expect(invalidation["reason"] as? String == "Unregistered")
        #expect(invalidation["event_id"] as? String == "e-dead")
        let dlq = try await harness.read(["calls.dlq"], atLeast: 2)
        #expect(Set(dlq.compactMap { $0.header("x-dlq-reason").map { String(decoding: $0, as: UTF8.self) } })
                == ["invalid_json", "apns_rejected"])
        await worker.shutdown()
        #expect(worker.dispatcher.inFlightCount == 0)
    }
}

extension WorkerServiceTests {
    /// The event contract keys every event by its call id: the key picks the partition, and so the worker that sees
    /// the call's hang-up. Events keyed otherwise (by a user, or not at all) are still sent, and counted and logged
    /// (the 1st, 2nd, 4th, … of them) so operators learn that the producer breaks the ordering the hang-up needs.
    @Test func eventsNotKeyedByTheirCallAreSentCountedAndLogged() async throws {
        let harness = try PipelineHarness()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let registry = MetricsRegistry()
        let log = RecordingLogSink()
        let worker = try harness.makeWorker(sender: ScriptedSender { _ in .ok }, registry: registry, log: log)
        // The harness keys each event by the first element: right for c-1, wrong for the other two.
        try await harness.produce([
            ("c-1", Fixtures.eventJSON(eventID: "e-1", callID: "c-1", createdAt: now)),
            ("user-7", Fixtures.eventJSON(eventID: "e-2", callID: "c-2", createdAt: now)),
            ("user-7", Fixtures.eventJSON(eventID: "e-3", callID: "c-3", createdAt: now)),
        ])
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry).total >= 3 })
        #expect(PipelineHarness.outcomes(registry)[.delivered] == 3, "keyed otherwise, still sent")
        let exposition = registry.exposition()
        #expect(ExpositionSeries.value("callpush_key_mismatches_total", in: exposition) == 2)
        let warnings = log.lines.filter { $0.contains("event not keyed by its call id") }
        #expect(warnings.count == 2, "the 1st and the 2nd: \(warnings)")
        #expect(warnings.contains { $0.contains(#""kafka.key":"user-7""#) && $0.contains(#""event.call_id":"c-3""#) })
        await worker.shutdown()
    }

    /// A producer whose clock runs an hour ahead: its calls ring at most `ring_timeout_s` (30 s) from when the worker
    /// read them — on the first hop, and on a retry hop whose first hop's deadline has passed.
    @Test func eventsCreatedAheadRingFromWhenTheyAreRead() async throws {
        let harness = try PipelineHarness()
        let registry = MetricsRegistry()
        let log = RecordingLogSink()
        let sender = ScriptedSender { _ in .ok }
        let worker = try harness.makeWorker(sender: sender, registry: registry, log: log)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let hourAhead = before + 3_600_000
        try await harness.produce([
            ("c-1", Fixtures.eventJSON(push: "voip", eventID: "e-1", callID: "c-1", createdAt: hourAhead)),
            ("c-2", Fixtures.eventJSON(eventID: "e-2", callID: "c-2", createdAt: before + 200)),
        ])
        // A retry of an incoming call whose first hop, a minute ago, set its deadline; its value still says "an hour
        // ahead". Sending it would ring a call that is over.
        try await harness.produce(
            [("c-3", Fixtures.eventJSON(eventID: "e-3", callID: "c-3", createdAt: hourAhead))], topic: "calls.retry.t0",
            headers: [KafkaHeader(name: "x-attempt", string: "2"), KafkaHeader(name: "x-deadline", string: String(before - 30_000))]
        )
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry).total >= 3 })
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(PipelineHarness.outcomes(registry)[.delivered] == 2)
        #expect(PipelineHarness.outcomes(registry)[.expired] == 1, "the retry past its first hop's deadline")
        let voip = try #require(sender.sent.first { String(decoding: $0.request.payload, as: UTF8.self).contains("\"c-1\"") })
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(voip.request.payload)) as? [String: Any])
        let ringDeadline = try #require(payload["ringDeadline"] as? Int64)
        #expect(ringDeadline >= before + 30_000 && ringDeadline <= after + 30_000, "30 s from when it was read")
        guard case .at(let expiration) = voip.request.expiration else { Issue.record("no apns-expiration"); return }
        #expect(expiration >= before / 1000 + 30 && expiration <= after / 1000 + 30)
        #expect(!sender.sent.contains { String(decoding: $0.request.payload, as: UTF8.self).contains("\"c-3\"") })
        // Only the hour is reported (c-2's 200 ms is clocks disagreeing as usual), once per read: c-1 and c-3.
        #expect(ExpositionSeries.value("callpush_events_created_ahead_total", in: registry.exposition()) == 2)
        let warnings = log.lines.filter { $0.contains("event created ahead of the worker's clock") }
        #expect(warnings.count == 2, "the 1st and the 2nd: \(warnings)")
        await worker.shutdown()
    }
}

extension WorkerServiceTests {
    /// The memory of ended calls shows how far back it reaches: 600 s while it has room; once more calls ended than it
    /// holds (3 here), the age of its oldest call — and a late incoming call whose hang-up it no longer holds rings,
    /// while one it still holds is dropped.
    @Test func theEndedCallMemorysReachIsExported() async throws {
        let harness = try PipelineHarness()
        let registry = MetricsRegistry()
        let worker = try harness.makeWorker(sender: ScriptedSender { _ in .ok }, registry: registry) {
            $0.dispatcher.calls.endedCallCapacity = 3
        }
        #expect(ExpositionSeries.value("callpush_ended_calls_reach_seconds", in: registry.exposition()) == 600)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await harness.produce((1...5).map { ("c-\($0)", Fixtures.eventJSON(type: "hangup", eventID: "h-\($0)", callID: "c-\($0)", createdAt: now)) })
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry).total >= 5 })
        let exposition = registry.exposition()
        #expect(ExpositionSeries.value("callpush_ended_calls", in: exposition) == 3)
        let reach = try #require(ExpositionSeries.value("callpush_ended_calls_reach_seconds", in: exposition))
        #expect(reach >= 0 && reach < 600, "full: the age of its oldest call, \(reach) s")
        // The five went in over four partitions, so which two were pushed out depends on the order they were read.
        try await harness.produce((1...5).map { ("c-\($0)", Fixtures.eventJSON(eventID: "i-\($0)", callID: "c-\($0)", createdAt: now)) })
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry).total >= 10 })
        let outcomes = PipelineHarness.outcomes(registry)
        #expect(outcomes[.cancelled] == 3 && outcomes[.delivered] == 7, "2 late calls rang: their hang-ups were forgotten")
        await worker.shutdown()
    }
}

/// Answers 503 the first time a payload is seen, then 200.
final class FailFirst: Sendable {
    private let seen = Mutex<Set<String>>([])
    func answer(for payload: String) -> APNsResult {
        seen.withLock { $0.insert(payload).inserted } ? .unavailable : .ok
    }
}
