import Foundation
import TestSupport
import Testing

/// Several `callpush run` processes in one consumer group, as operators run them: killed, scaled out and in,
/// restarted one by one, with call traffic from an independent producer (kcat, murmur2 partitioner). Every
/// scenario checks the call semantics at the mock APNs (nothing rings after its hang-up) and the receipts
/// (nothing lost). Short versions run in `make test`; `make test-long` (CALLPUSH_LONG_TESTS=1) runs more events
/// and more kills. The crash and scaling scenarios run on both embedded clusters: librdkafka 2.0.2's
/// (`callpush kafka-mock`) and 2.16's (`scripts/kafka-mock-newer.py`), two implementations of the group coordinator.
@Suite(.serialized) struct ScaleOutTests {
    static let long = ProcessInfo.processInfo.environment["CALLPUSH_LONG_TESTS"] == "1"

    /// (a) 3 workers, one SIGKILLed mid-run and restarted (repeatedly in the long version): nothing lost, no
    /// incoming push after its call's hang-up was delivered, and the pushes sent again bounded by the killed
    /// worker's in-flight window plus about a second of its traffic.
    @Test(arguments: ScaleOutBed.Cluster.allCases) func crashReplayNeverRingsAnEndedCall(cluster: ScaleOutBed.Cluster) async throws {
        let window = 400  // bounds what a kill leaves to repeat
        let bed = try ScaleOutBed(partitions: 6, latencyMilliseconds: 100, extraWorkerArguments: ["--worker-max-in-flight", String(window)],
                                  cluster: cluster)
        for name in ["a", "b", "c"] { try bed.startWorker(name) }
        #expect(await bed.waitUntilSettled(), "\(bed.logs)")
        // Calls arrive every 0.2 s, 40 at a time; each hangs up about a second (200 calls) after it rang.
        let batches = Self.long ? 120 : 30
        let kills = Self.long ? 3 : 1
        let started = Date()
        for batch in 0..<batches {
            try bed.produceCalls(40, hangUpLag: 200)
            try await Task.sleep(for: .milliseconds(200))
            if (batch + 1) % (batches / (kills + 1)) == 0 && batch + 1 < batches {
                bed.killWorker("b")
                try bed.startWorker("b")
            }
        }
        try bed.produceRemainingHangUps()
        let elapsed = Date().timeIntervalSince(started)
        let verdict = try await bed.verdict()
        // One worker's rate (of three) while traffic flowed. The killed worker's repeats: its in-flight window and
        // about a second of its traffic (0.5 s commit interval, 0.1 s store interval, margin). The others': the mock
        // broker refuses commits from a join until it elects a leader (see the scaling test), so the two rebalances a
        // kill causes (the dead member's expiry, the restart's join) repeat what the workers say they handed over.
        let perWorkerRate = Double(verdict.deliveries) / max(elapsed, 1) / 3
        let killed = window + Int(perWorkerRate * 1.5)
        let handedOver = bed.handedOverMessages
        let bound = kills * killed + handedOver
        print("crash replay (\(cluster) cluster): \(kills) SIGKILL(s), \(bed.producedCount) events: \(verdict); bound \(bound) per run "
              + "(per kill: window \(window) + 1.5 s at \(Int(perWorkerRate))/s = \(killed); handed over past a commit \(handedOver))")
        #expect(verdict.lost == 0, "\(bed.logs)")
        #expect(verdict.ringsAfterHangUp == 0)
        #expect(verdict.duplicatePushes <= bound)
    }

    /// (b) With `run`'s default session timeout, a worker SIGKILLed and restarted a second later (as Kubernetes
    /// restarts a crashed pod) holds the group's calls for about two session timeouts at most. The eager `range`
    /// group cannot finish the rebalance the restart starts until the dead member's session has expired, and every
    /// member waits in it; librdkafka's 2.0.2 mock broker then waits a session timeout − 1 s for members to join
    /// (a Kafka broker finishes once all live members have rejoined, about a heartbeat): 10.3 s here, and when the
    /// dead member expires just after the mock's election, a second join wait makes it about 21 s (the bound leaves
    /// 9 s of margin over that). With librdkafka's 45 s session timeout calls waited 45–46 s.
    @Test func aCrashedWorkersRestartHoldsCallsAboutTwoSessionTimeoutsAtMost() async throws {
        let sessionTimeout = 10  // run's default
        let bed = try ScaleOutBed(partitions: 6, latencyMilliseconds: 5, sessionTimeout: nil)
        for name in ["a", "b"] { try bed.startWorker(name) }
        #expect(await bed.waitUntilSettled(), "\(bed.logs)")
        for step in 0..<100 {
            try bed.produceCalls(20, hangUpLag: 80)
            if step == 8 {
                bed.killWorker("b")
                try await Task.sleep(for: .seconds(1))
                try bed.startWorker("b")
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        try bed.produceRemainingHangUps()
        let verdict = try await bed.verdict()
        let longest = try bed.longestLatency()
        print("crash and restart at the default session timeout: \(verdict); longest wait \(longest) ms")
        #expect(verdict.lost == 0, "\(bed.logs)")
        #expect(verdict.ringsAfterHangUp == 0)
        #expect(longest <= (2 * sessionTimeout + 10) * 1000, "\(bed.logs)")
    }

    /// (c) 40 % of pushes answered 503, hang-ups produced seconds after their calls, 3 workers: the retries of an
    /// incoming call stay on its partition number (upstream hashes with murmur2, callpush produces retries by
    /// partition), so the worker that holds a retry also sees the hang-up: nothing rings after it.
    @Test func retriesStayWithTheirCallsHangUp() async throws {
        let bed = try ScaleOutBed(partitions: 6, latencyMilliseconds: 5, extraWorkerArguments: ["--kafka-max-attempts", "6"])
        _ = bed.apns.control("set rate-503 0.4")
        for name in ["a", "b", "c"] { try bed.startWorker(name) }
        #expect(await bed.waitUntilSettled(), "\(bed.logs)")
        try bed.produceCalls(Self.long ? 2_000 : 400, hangUps: false)
        try await Task.sleep(for: .milliseconds(2500))
        try bed.produceRemainingHangUps()
        let verdict = try await bed.verdict()
        print("retries under 40 % 503 with late hang-ups: \(verdict)")
        #expect(verdict.lost == 0, "\(bed.logs)")
        #expect(verdict.ringsAfterHangUp == 0)
    }

    /// (e) A backlog far longer than the read-ahead may hold (a worker joining after a long rebalance or outage):
    /// 600 calls on 2 partitions, each hung up 300 calls later, are in the log when the only worker starts with
    /// `--worker-max-in-flight 60` (the read-ahead holds 30 per partition). Its backlog scans find the hang-ups
    /// before any incoming call of the partition goes: none of the 300 hung-up calls rings, the other 300 do, and
    /// the read-ahead lets nothing go early. With `--worker-backlog-scans off` the read-ahead alone lets most of
    /// them go at its limit and the hung-up calls ring (their hang-ups follow).
    @Test(arguments: [true, false]) func aBacklogBeyondTheReadAheadsLimitNeverRingsItsEndedCalls(scans: Bool) async throws {
        let bed = try ScaleOutBed(partitions: 2, latencyMilliseconds: 5,
                                  extraWorkerArguments: ["--worker-max-in-flight", "60", "--worker-backlog-scans", scans ? "on" : "off"])
        try bed.produceCalls(600, hangUpLag: 300)
        try bed.startWorker("a")
        let verdict = try await bed.verdict()
        let rang = Set(bed.deliveries().filter { $0.pushType == 1 }.map(\.callID))
        let ended = (0..<300).filter { rang.contains("call-\($0)") }.count
        let ringing = (300..<600).filter { rang.contains("call-\($0)") }.count
        let completedScans = bed.metric("a", "callpush_read_ahead_scans_total{result=\"completed\",scan=\"backlog\"}") ?? 0
        let releasedEarly = bed.readAheadReleasedEarly
        print("backlog of 600 calls, 300 hung up, scans \(scans ? "on" : "off"): \(verdict); ended calls rang \(ended), "
              + "live ones \(ringing); scans \(Int(completedScans)), let go early \(releasedEarly)")
        #expect(verdict.lost == 0, "\(bed.logs)")
        #expect(ringing == 300)
        if scans {
            #expect(ended == 0, "\(bed.logs)")
            #expect(completedScans >= 2, "one scan per partition")
            #expect(releasedEarly == 0)
        } else {
            #expect(ended > 100, "the read-ahead alone cannot hold this backlog")
            #expect(completedScans == 0 && releasedEarly > 0)
        }
    }

    /// (d) Scale out 1 → 3 and in 3 → 1 with SIGTERM during traffic, then a rolling restart one worker at a time
    /// (each step waits, traffic flowing, until the group has settled, as a rollout waits for readiness): nothing
    /// lost, nothing rings after its hang-up, all three workers share the calls; pushes sent twice only where
    /// librdkafka's mock broker refused a commit.
    ///
    /// Every worker drains, stores and commits what it finished before it gives a partition up, and a partition
    /// that comes back to the same worker resumes where that worker finished; against a real broker that repeats only
    /// what was finished above an event given back unsent. The 2.0.2 mock broker, though, refuses every offset commit from the moment a member joins until it
    /// elects a leader (session timeout − 1 s later), so a partition that moves to another worker during a scale-out
    /// or a restart is repeated from the last commit before the join (the worker stops taking events at the first
    /// refused commit): those duplicates are the mock's, and each is among the events the workers say they handed
    /// over past a partition's last commit (`callpush_kafka_uncommitted_handed_over_total`, logged with
    /// `kafka.uncommitted_messages`).
    @Test(arguments: ScaleOutBed.Cluster.allCases)
    func scalingAndRollingRestartsLoseAndRepeatNothing(cluster: ScaleOutBed.Cluster) async throws {
        let bed = try ScaleOutBed(partitions: 6, latencyMilliseconds: 20, cluster: cluster)
        try bed.startWorker("a")
        #expect(await bed.waitUntilSettled(), "\(bed.logs)")
        // 120 calls/s, 800 in the long version: each rebalance pauses the group for 5–20 s, and at 800 calls/s the
        // backlog a worker then finds is far beyond the read-ahead's limit (half the per-partition in-flight limit: 500
        // incoming calls). Before the backlog scans the read-ahead let thousands go early there and 250–500 calls rang
        // after their hang-up; the scans find the hang-ups whatever the backlog's length.
        let batch = Self.long ? 200 : 30
        /// Calls every 250 ms: `rounds` batches, then more until the group has settled.
        func traffic(rounds: Int) async throws {
            for _ in 0..<rounds {
                try bed.produceCalls(batch, hangUpLag: 2 * batch)
                try await Task.sleep(for: .milliseconds(250))
            }
            let deadline = Date().addingTimeInterval(60)
            while !bed.isSettled && Date() < deadline {
                try bed.produceCalls(batch, hangUpLag: 2 * batch)
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(bed.isSettled, "\(bed.logs)")
        }
        try await traffic(rounds: 4)
        try bed.startWorker("b")
        try bed.startWorker("c")
        try await traffic(rounds: 4)
        try await traffic(rounds: Self.long ? 10 : 4)  // three workers sharing the calls
        for name in ["a", "b", "c"] {
            let consumed = bed.metric(name, "callpush_events_consumed_total{topic=\"calls\"}") ?? 0
            #expect(consumed > 0, "worker \(name) consumed no calls while three shared them")
        }
        #expect(bed.stopWorker("b") == 0)
        #expect(bed.stopWorker("c") == 0)
        try await traffic(rounds: 4)
        try bed.startWorker("b")
        try await traffic(rounds: 4)
        for name in ["a", "b"] {
            #expect(bed.stopWorker(name) == 0)
            try bed.startWorker(name)
            try await traffic(rounds: 4)
        }
        try bed.produceRemainingHangUps()
        let verdict = try await bed.verdict()
        let releasedEarly = bed.readAheadReleasedEarly
        let scans = bed.scanMilliseconds.sorted()
        print("scale 1→3→1 and rolling restarts (\(cluster) cluster): \(verdict); incoming calls the read-ahead let go early \(releasedEarly); "
              + "\(scans.count) backlog scans, median \(scans.isEmpty ? 0 : scans[scans.count / 2]) ms, longest \(scans.last ?? 0) ms")
        #expect(verdict.lost == 0, "\(bed.logs)")
        #expect(verdict.ringsAfterHangUp == 0, "read-ahead let \(releasedEarly) go early")
        // Each worker counts a partition it gave away at its next assignment (or when it stops): the messages read
        // past the partition's last successful commit, which the next owner read again. With every outcome final,
        // the last assignment is behind every worker. Each push sent twice must be one of those (an event read again
        // can still end without a second push: its hang-up was read first), and so must each event with a second
        // final receipt.
        let handedOver = bed.handedOverMessages
        print("  events the workers handed over past their last commit \(handedOver)")
        #expect(verdict.duplicatePushes <= handedOver, "\(bed.logs)")
        #expect(verdict.duplicateReceipts <= handedOver, "\(bed.logs)")
    }

    /// (f) An incoming call waiting in a retry tier when its partition moves to another worker, whose hang-up the
    /// previous owner already delivered. 20 calls (400 in the long version) on 2 partitions fail twice in a 503 storm
    /// and wait in the 10 s tier; the storm ends, the first half are hung up and worker a delivers their hang-ups, then
    /// stops (SIGTERM) before the tier is due, and b, a new process that remembers nothing, takes both partitions.
    /// Those hang-ups lie below the committed offsets of the calls partitions, where b's consumer and backlog scans
    /// never read; b's history scans (from the retries' first hops) find them, and none of the ended calls rings when
    /// its retry comes due; the live ones ring once each. With `--worker-backlog-scans off` b has nothing to learn the
    /// hang-ups from and every ended call rings.
    @Test(arguments: [true, false]) func anIncomingRetryWhoseHangUpThePreviousOwnerSentNeverRings(scans: Bool) async throws {
        let calls = Self.long ? 400 : 20
        let ended = 0..<(calls / 2)
        let live = (calls / 2)..<calls
        let bed = try ScaleOutBed(partitions: 2, tiers: ["1s", "10s"], latencyMilliseconds: 5,
                                  extraWorkerArguments: ["--kafka-max-attempts", "5", "--worker-backlog-scans", scans ? "on" : "off"])
        try bed.startWorker("a")
        #expect(await bed.waitUntilSettled(), "\(bed.logs)")
        _ = bed.apns.control("set rate-503 1")
        try bed.produceCalls(calls, hangUps: false)
        let lastTier = "callpush_retries_total{tier=\"calls.retry.10s\"}"
        try #require(await Eventually.waitUntil(timeout: .seconds(60), interval: .milliseconds(200)) { (bed.metric("a", lastTier) ?? 0) >= Double(calls) },
                     "the calls did not all reach the 10 s tier: \(bed.diagnostics("a", ["_retries_total", "_outcomes_total"]))")
        let reachedLastTier = Date()
        _ = bed.apns.control("set rate-503 0")
        try bed.produceHangUps(upTo: ended.upperBound)
        try #require(await Eventually.waitUntil(timeout: .seconds(60), interval: .milliseconds(200)) { bed.deliveries().filter { $0.pushType == 2 }.count == ended.count },
                     "worker a did not deliver the hang-ups: \(bed.diagnostics("a", ["callpush_outcomes_total"]))")
        #expect(bed.stopWorker("a") == 0)
        let stoppedAfter = Date().timeIntervalSince(reachedLastTier)
        // Nothing rang yet, so any later ring of an ended call comes after its hang-up.
        try #require(bed.deliveries().allSatisfy { $0.pushType == 2 },
                     "worker a took retries from the 10 s tier before it stopped, \(Int(stoppedAfter)) s after they entered it")
        try bed.startWorker("b")
        // Every event produced so far (the incoming calls, the first hang-ups) final: b has sent or cancelled every retry.
        let receipts = try await bed.waitForAllOutcomes(timeout: 90)
        try #require(bed.produced.keys.allSatisfy { receipts[$0] != nil }, "worker b did not finish the retries:\n\(bed.logs)")
        try bed.produceRemainingHangUps()
        let verdict = try await bed.verdict()
        let deliveries = bed.deliveries()
        func rings(_ call: Int) -> Int { deliveries.filter { $0.callID == "call-\(call)" && $0.pushType == 1 }.count }
        let endedRang = ended.filter { rings($0) > 0 }.count
        let liveRangOnce = live.filter { rings($0) == 1 }.count
        let endedOutcomes = try bed.finalOutcomes("incoming", calls: ended).sorted { $0.key < $1.key }
        print("incoming retries moved to a new worker, \(ended.count) of \(calls) calls hung up by the previous one, "
              + "scans \(scans ? "on" : "off"): \(verdict); ended calls rang \(endedRang) (their incoming: "
              + "\(endedOutcomes.map { "\($0.key) \($0.value)" }.joined(separator: ", "))), live ones rang once \(liveRangOnce); "
              + "a stopped \(String(format: "%.1f", stoppedAfter)) s into the 10 s tier")
        #expect(verdict.lost == 0, "\(bed.logs)")
        #expect(liveRangOnce == live.count, "\(bed.logs)")
        #expect(endedRang == (scans ? 0 : ended.count), "\(bed.logs)")
    }

    /// (g) A 5xx storm while the group changes, as an autoscaler and a rollout would change it: 30 % of pushes answered
    /// 503 (retry tiers 1 s and 5 s), calls hung up about 0.75 s after they ring, worker b replaced by c a third of the
    /// way through and a restarted at two thirds. Retries of calls whose hang-up a previous owner delivered reach new
    /// owners, whose history scans find those hang-ups: nothing rings after its hang-up, nothing is lost. The long
    /// version runs longer and also with `--worker-backlog-scans off`, printing the rings that then get through.
    @Test(arguments: long ? [true, false] : [true]) func aStormWhileTheGroupChangesRingsNoEndedCall(scans: Bool) async throws {
        let bed = try ScaleOutBed(partitions: 4, tiers: ["1s", "5s"], latencyMilliseconds: 5,
                                  extraWorkerArguments: ["--kafka-max-attempts", "10", "--worker-backlog-scans", scans ? "on" : "off"])
        _ = bed.apns.control("set rate-503 0.3")
        for name in ["a", "b"] { try bed.startWorker(name) }
        #expect(await bed.waitUntilSettled(), "\(bed.logs)")
        // 20 calls every 250 ms (80/s), each hung up 60 calls (0.75 s) later.
        let rounds = Self.long ? 160 : 48
        for round in 1...rounds {
            try bed.produceCalls(20, hangUpLag: 60)
            try await Task.sleep(for: .milliseconds(250))
            if round == rounds / 3 {
                #expect(bed.stopWorker("b") == 0)
                try bed.startWorker("c")
            } else if round == 2 * rounds / 3 {
                #expect(bed.stopWorker("a") == 0)
                try bed.startWorker("a")
            }
        }
        try bed.produceRemainingHangUps()
        let verdict = try await bed.verdict()
        let historyScans = ["a", "c"].compactMap { bed.metric($0, "callpush_read_ahead_scans_total{result=\"completed\",scan=\"history\"}") }
        print("503 storm while b is replaced by c and a restarts, scans \(scans ? "on" : "off"): \(verdict); "
              + "history scans by the last a and c \(Int(historyScans.reduce(0, +)))")
        #expect(verdict.lost == 0, "\(bed.logs)")
        if scans { #expect(verdict.ringsAfterHangUp == 0, "\(bed.logs)") }
    }

    /// (h) `scripts/group-changes.py` as `make bench` runs it, long version only, on both clusters: steady calls at
    /// 200/s through two and three workers while the group scales out, scales in, restarts every worker in turn and
    /// loses one worker to SIGKILL with and without a restart. Every phase delivers calls, nothing is lost and nothing
    /// rings after its hang-up; the waits per phase are printed (the bench judges them, a test does not).
    @Test(.enabled(if: long), arguments: ScaleOutBed.Cluster.allCases)
    func groupChangesUnderSteadyTrafficLoseAndRingNothing(cluster: ScaleOutBed.Cluster) async throws {
        let result = try await CallpushProcess.runOffPool(
            ["cooperative", "20"], executable: PackageRoot.url.appendingPathComponent("scripts/group-changes.py"),
            environment: ["BIN": CallpushProcess.executable.path, "CLUSTER": cluster == .newer ? "newer" : "callpush",
                          "PYTHON": PythonInterpreter.path(importing: ["confluent_kafka"])],
            timeout: 600)
        print(result.stdout)
        #expect(result.status == 0, "\(result.stderr)")
        let last = result.stdout.split(separator: "\n").last(where: { $0.hasPrefix("{") }) ?? ""
        let run = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(result.stdout)")
        let phases = run["phases"] as? [[String: Any]] ?? []
        #expect(phases.count == 7)
        for phase in phases {
            let calls = ["kept", "moved"].compactMap { (phase[$0] as? [String: Any])?["calls"] as? Int }.reduce(0, +)
            #expect(calls > 0, "\(phase["phase"] ?? "?") delivered no call")
        }
        #expect(run["lost"] as? Int == 0)
        #expect(run["rings_after_hang_up"] as? Int == 0)
    }
}
