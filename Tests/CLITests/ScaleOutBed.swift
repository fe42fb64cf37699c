import Foundation
import TestSupport
@preconcurrency import Glibc

/// Operators' set-up for scale-out tests: `callpush kafka-mock` and `callpush mock-apns` (token mode, a fresh key)
/// as processes, any number of `callpush run` processes in one group, and call traffic from an independent
/// producer (kcat with the Java client's murmur2 partitioner, keyed by call id).
final class ScaleOutBed {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    /// The key id of the second key, the one ``writeApps(rotated:)`` rotates to.
    static let rotatedKeyID = "XYZ987WVUT"

    /// How the workers get their APNs credentials.
    enum Credentials {
        /// `--apns-key-file`, `--apns-key-id`, `--apns-team-id`.
        case flags
        /// `--config` with an `apns.apps` file of one app, `com.example.app`, on the first key until
        /// ``writeApps(rotated:)`` rotates it to the second; the mock accepts both keys.
        case appsFile
    }

    /// One push the mock answered 200, in the order the mock received them.
    struct Delivery {
        let callID: String
        let pushType: Int
        let apnsID: String
        /// The `kid` of its provider token.
        let keyID: String?
    }

    /// What the mock saw and what the receipts say, checked against the call semantics.
    struct Verdict: CustomStringConvertible {
        /// Events produced that never got a final receipt.
        var lost: Int
        /// Incoming pushes the mock accepted after it had accepted their call's hang-up.
        var ringsAfterHangUp: Int
        /// Pushes the mock accepted more than once (the same apns-id).
        var duplicatePushes: Int
        /// Final receipts beyond the first per event.
        var duplicateReceipts: Int
        var deliveries: Int

        var description: String {
            "lost \(lost), rings after hang-up \(ringsAfterHangUp), duplicate pushes \(duplicatePushes) of \(deliveries), "
                + "duplicate receipts \(duplicateReceipts)"
        }
    }

    let directory: URL
    let kafka: CallpushProcess
    let apns: CallpushProcess
    let partitions: Int
    let tiers: [String]
    /// The worker's `--config` file (``Credentials/appsFile``).
    let configPath: String
    private let keyPaths: [String]
    private let baseArguments: [String]
    private(set) var workers: [String: (process: CallpushProcess, metricsPort: Int)] = [:]
    /// The last log lines of every worker stopped or killed so far, in that order.
    private var retiredLogs: [String] = []
    private var retiredHandedOver = 0
    private var retiredScanMilliseconds: [Int] = []
    private var retiredReleasedEarly = 0
    /// Every event produced: event id → (call id, type).
    private(set) var produced: [String: (callID: String, type: String)] = [:]
    private var nextCall = 0
    private var nextHangUp = 0

    /// `sessionTimeout`: the workers' `--kafka-session-timeout` in seconds (6, the least, unless given); nil: `run`'s
    /// default.
    /// The embedded Kafka cluster the workers use.
    enum Cluster: String, Sendable, CaseIterable, CustomStringConvertible {
        /// `callpush kafka-mock`: librdkafka 2.0.2's mock cluster, the one callpush links.
        case embedded
        /// `scripts/kafka-mock-newer.py`: the mock cluster of the librdkafka confluent-kafka bundles (2.16), a newer
        /// group coordinator that the same 2.0.2 workers talk to.
        case newer
        var description: String { rawValue }
    }

    init(
        partitions: Int, tiers: [String] = ["1s", "2s"], latencyMilliseconds: Int, extraWorkerArguments: [String] = [],
        credentials: Credentials = .flags, sessionTimeout: Int? = 6, cluster: Cluster = .embedded
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-scale-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let directory = self.directory
        keyPaths = ["AuthKey.p8", "AuthKey2.p8"].map { directory.appendingPathComponent($0).path }
        for key in keyPaths {
            _ = try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        }
        configPath = directory.appendingPathComponent("config.json").path
        self.partitions = partitions
        self.tiers = tiers
        let topics = ["calls"] + tiers.map { "calls.retry.\($0)" } + ["calls.dlq", "apns.tokens.invalidated", "calls.outcomes"]
        let clusterArguments = ["--partitions", String(partitions), "--topics", topics.joined(separator: ",")]
        switch cluster {
        case .embedded:
            kafka = try CallpushProcess(["kafka-mock"] + clusterArguments)
        case .newer:
            let script = PackageRoot.url.appendingPathComponent("scripts/kafka-mock-newer.py").path
            kafka = try CallpushProcess([PythonInterpreter.path(importing: ["confluent_kafka"]), script] + clusterArguments,
                                          executable: URL(fileURLWithPath: "/usr/bin/env"))
        }
        let mockCredentials: [String]
        let workerCredentials: [String]
        switch credentials {
        case .flags:
            mockCredentials = ["--key-file", keyPaths[0], "--key-id", Self.keyID, "--team-id", Self.teamID, "--bundle-id", "com.example.app"]
            workerCredentials = ["--apns-key-file", keyPaths[0], "--apns-key-id", Self.keyID, "--apns-team-id", Self.teamID]
        case .appsFile:
            // The mock's apps file lists the app once per key, so it accepts tokens of either.
            let mockApps = directory.appendingPathComponent("mock-apps.json").path
            try Self.appsJSON([(keyPaths[0], Self.keyID), (keyPaths[1], Self.rotatedKeyID)])
                .write(toFile: mockApps, atomically: true, encoding: .utf8)
            mockCredentials = ["--apps", mockApps]
            workerCredentials = ["--config", configPath]
        }
        apns = try CallpushProcess(
            ["mock-apns", "--latency-ms", String(latencyMilliseconds), "--record", "1000000"] + mockCredentials)
        let parts = apns.firstLine.split(separator: " ")
        baseArguments = [
            "run", "--kafka-brokers", kafka.firstLine, "--kafka-group", "scale-test", "--kafka-receipts",
            "--kafka-retry-tiers", tiers.joined(separator: ","), "--apns-endpoint", String(parts[0]),
            "--apns-ca-file", String(parts[1].dropFirst(3)), "--log-level", "info",
            // librdkafka's view of the group each second: its join-state changes are logged (see `logs`).
            "--kafka-properties", "statistics.interval.ms=1000",
        ] + (sessionTimeout.map { ["--kafka-session-timeout", String($0)] } ?? []) + workerCredentials + extraWorkerArguments
        if credentials == .appsFile { try writeApps(rotated: false) }
    }

    // MARK: - Configuration

    /// `{"apns":{"apps":[…]}}` with `com.example.app` once per (key file, key id).
    private static func appsJSON(_ keys: [(file: String, keyID: String)]) -> String {
        let apps = keys.map {
            "{\"bundle-id\":\"com.example.app\",\"key-file\":\"\($0.file)\",\"key-id\":\"\($0.keyID)\",\"team-id\":\"\(teamID)\"}"
        }
        return "{\"apns\":{\"apps\":[\(apps.joined(separator: ","))]}}"
    }

    /// Writes the workers' apps file: `com.example.app` on the first key, or (`rotated`) on the second.
    func writeApps(rotated: Bool) throws {
        try writeConfig(Self.appsJSON([rotated ? (keyPaths[1], Self.rotatedKeyID) : (keyPaths[0], Self.keyID)]))
    }

    /// Replaces the workers' `--config` file with `text`.
    func writeConfig(_ text: String) throws {
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Sends SIGHUP to the worker called `name`: it re-reads its configuration.
    func reload(_ name: String) {
        guard let worker = workers[name] else { return }
        worker.process.child.signal(SIGHUP)
    }

    deinit {
        for worker in workers.values { worker.process.kill() }
        apns.terminate()
        kafka.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - Workers

    /// Starts (or restarts) the worker called `name` as a new process.
    func startWorker(_ name: String) throws {
        let port = FreePort.next()
        let process = try CallpushProcess(
            baseArguments + ["--kafka-client-id", "worker-\(name)", "--metrics-port", String(port)], readFirstLine: false)
        workers[name] = (process, port)
    }

    /// SIGTERM; returns the exit status.
    @discardableResult
    func stopWorker(_ name: String) -> Int32 {
        retiredReleasedEarly += releasedEarly(name)
        guard let worker = workers.removeValue(forKey: name) else { return -1 }
        let status = worker.process.terminate()
        retire(name, worker.process, "stopped, exit status \(status)")
        return status
    }

    /// SIGKILL, as an OOM kill or a node failure would.
    func killWorker(_ name: String) {
        guard let worker = workers.removeValue(forKey: name) else { return }
        worker.process.kill()
        retire(name, worker.process, "killed")
    }

    /// Keeps the last lines of a worker that ended, for ``logs``, and what it handed over.
    private func retire(_ name: String, _ process: CallpushProcess, _ how: String) {
        retiredLogs.append("\(name) (\(how)):\n\(process.logTail)")
        retiredHandedOver += Self.loggedValues("kafka.uncommitted_messages", in: process.log).reduce(0, +)
        retiredScanMilliseconds += Self.loggedValues("read_ahead.ms", in: process.log)
    }

    /// Messages the workers read from partitions they gave away, past those partitions' last successful commits:
    /// what the next owners read again, from the workers' logs (`kafka.uncommitted_messages`), those that ended
    /// included. A running worker counts a partition at its next assignment or when it stops.
    var handedOverMessages: Int {
        workers.values.reduce(retiredHandedOver) { $0 + Self.loggedValues("kafka.uncommitted_messages", in: $1.process.log).reduce(0, +) }
    }

    /// How long each backlog scan of every worker took, in ms (their `backlog scanned for hang-ups` log lines).
    var scanMilliseconds: [Int] {
        workers.values.reduce(retiredScanMilliseconds) { $0 + Self.loggedValues("read_ahead.ms", in: $1.process.log) }
    }

    /// Incoming calls the workers' read-ahead let go before reading through their partition's backlog
    /// (`callpush_read_ahead_released_early_total`, both reasons), read before each SIGTERM and from the running
    /// workers (a killed worker's are lost): where "never ring after the hang-up" is not guaranteed
    /// (docs/operations.md, "Never ring after a hang-up").
    var readAheadReleasedEarly: Int {
        workers.keys.reduce(retiredReleasedEarly) { $0 + releasedEarly($1) }
    }

    private func releasedEarly(_ name: String) -> Int {
        Int(ExpositionSeries.sum("callpush_read_ahead_released_early_total", in: metricsText(name) ?? ""))
    }

    /// The numbers logged under `key` (a JSON log field holding a number as a string), in log order.
    private static func loggedValues(_ key: String, in log: String) -> [Int] {
        let field = "\"\(key)\":\""
        return log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: field) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    /// For a failed expectation: the worker's metric lines containing any of `fragments`, and the mock's counts.
    func diagnostics(_ name: String, _ fragments: [String]) -> String {
        let lines = (metricsText(name) ?? "").split(separator: "\n").filter { line in
            !line.hasPrefix("#") && fragments.contains { line.contains($0) }
        }
        let stats = apns.control("stats", until: nil).joined(separator: " ")
        return "worker \(name): \(lines.joined(separator: "; ")); mock-apns stats: \(stats)"
    }

    /// One worker's metric value (first series whose line starts with `prefix`), nil when unreachable.
    func metric(_ name: String, _ prefix: String) -> Double? {
        metricsText(name).flatMap { ExpositionSeries.value(prefix, in: $0) }
    }

    /// One worker's `/metrics` text, nil when unreachable.
    private func metricsText(_ name: String) -> String? {
        guard let port = workers[name]?.metricsPort else { return nil }
        return try? ExternalTool.run(["curl", "-s", "--max-time", "2", "localhost:\(port)/metrics"]).output
    }

    /// Whether every running worker has joined the group (`callpush_ready 1`), owns calls partitions
    /// (`callpush_kafka_assigned_partitions`; with no more workers than partitions the group gives each some), and
    /// together they own every one, so a rebalance has settled.
    ///
    /// The workers are read one after the other, so a read can straddle a cooperative rebalance's first round: the
    /// old owner read before it gave partitions up, the joining worker after its empty first assignment made it
    /// ready. Those add up to every partition; the joining worker's none tells it apart.
    var isSettled: Bool {
        var owned = 0
        for name in workers.keys {
            guard metric(name, "callpush_ready") == 1 else { return false }
            let own = Int(metric(name, "callpush_kafka_assigned_partitions{topic=\"calls\"}") ?? 0)
            if own == 0 && workers.count <= partitions { return false }
            owned += own
        }
        return !workers.isEmpty && owned == partitions
    }

    /// Waits until ``isSettled``, scraping every 200 ms.
    func waitUntilSettled(timeout: TimeInterval = 60) async -> Bool {
        await Eventually.waitUntil(timeout: .seconds(timeout), interval: .milliseconds(200)) { isSettled }
    }

    // MARK: - Traffic

    /// Produces `count` new calls with kcat (murmur2, keyed by call id): each call's incoming event, and the
    /// hang-up of every earlier call at least `hangUpLag` calls back that has none yet, so a call's hang-up follows
    /// its incoming in its partition, `hangUpLag` calls later. With `hangUps: false` only incoming events.
    @discardableResult
    func produceCalls(_ count: Int, hangUpLag: Int = 3, hangUps: Bool = true) throws -> Range<Int> {
        let calls = nextCall..<(nextCall + count)
        nextCall += count
        var lines: [String] = []
        for call in calls {
            lines.append(eventLine(call: call, type: "incoming"))
            while hangUps && nextHangUp <= call - hangUpLag {
                lines.append(eventLine(call: nextHangUp, type: "hangup"))
                nextHangUp += 1
            }
        }
        try produce(lines)
        return calls
    }

    /// Produces the hang-up of every call that has none yet.
    func produceRemainingHangUps() throws {
        try produceHangUps(upTo: nextCall)
    }

    /// Produces the hang-up of every call below `end` that has none yet (hang-ups go in call order).
    func produceHangUps(upTo end: Int) throws {
        let calls = nextHangUp..<max(nextHangUp, end)
        try produce(calls.map { eventLine(call: $0, type: "hangup") })
        nextHangUp = calls.upperBound
    }

    private func eventLine(call: Int, type: String) -> String {
        let eventID = UUID().uuidString.lowercased()
        let callID = "call-\(call)"
        produced[eventID] = (callID, type)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let token = String(format: "%064x", call + 1)
        return "\(callID)\t{\"event_id\":\"\(eventID)\",\"type\":\"\(type)\",\"call_id\":\"\(callID)\",\"device_token\":\"\(token)\","
            + "\"push\":\"alert\",\"topic\":\"com.example.app\",\"environment\":\"production\",\"created_at\":\(now),\"ring_timeout_s\":600}"
    }

    private func produce(_ lines: [String]) throws {
        let result = try ExternalTool.run(
            ["kcat", "-b", kafka.firstLine, "-P", "-t", "calls", "-K", "\t", "-X", "partitioner=murmur2_random"],
            input: lines.joined(separator: "\n") + "\n", timeout: 60)
        guard result.status == 0 else { throw BedError(message: "kcat -P failed: \(result.output)") }
    }

    struct BedError: Error { let message: String }

    var producedCount: Int { produced.count }

    // MARK: - Observing

    /// Pushes the mock answered 200 so far.
    var successCount: Int {
        let stats = apns.control("stats", until: nil).first ?? ""
        guard let object = try? JSONSerialization.jsonObject(with: Data(stats.utf8)) as? [String: Any],
            let outcomes = object["outcomes"] as? [String: Int]
        else { return 0 }
        return outcomes["Success"] ?? 0
    }

    /// Final receipts (outcome other than `retried`) per event id, from the outcomes topic.
    func finalReceipts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for receipt in try receipts() where receipt["outcome"] as? String != "retried" {
            guard let id = receipt["event_id"] as? String else { continue }
            counts[id, default: 0] += 1
        }
        return counts
    }

    /// The final outcomes of the `type` events (`incoming`, `hangup`) of `calls`, counted by outcome.
    func finalOutcomes(_ type: String, calls: Range<Int>) throws -> [String: Int] {
        let callIDs = Set(calls.map { "call-\($0)" })
        let events = Set(produced.filter { $0.value.type == type && callIDs.contains($0.value.callID) }.keys)
        var counts: [String: Int] = [:]
        for receipt in try receipts() {
            guard let id = receipt["event_id"] as? String, events.contains(id), let outcome = receipt["outcome"] as? String,
                outcome != "retried"
            else { continue }
            counts[outcome, default: 0] += 1
        }
        return counts
    }

    /// The longest `latency_ms` (`created_at` → APNs answer) of any receipt: how long the slowest push waited.
    func longestLatency() throws -> Int {
        try receipts().compactMap { $0["latency_ms"] as? Int }.max() ?? 0
    }

    /// Every receipt on the outcomes topic so far.
    private func receipts() throws -> [[String: Any]] { try OutcomeReceipts.read(brokers: kafka.firstLine) }

    /// Waits until every produced event has a final receipt; returns the receipts.
    func waitForAllOutcomes(timeout: TimeInterval = 120) async throws -> [String: Int] {
        var receipts: [String: Int] = [:]
        try await Eventually.waitUntil(timeout: .seconds(timeout), interval: .milliseconds(500)) {
            receipts = try finalReceipts()
            return !produced.keys.contains { receipts[$0] == nil }
        }
        return receipts
    }

    /// The pushes the mock accepted, in the order it received them.
    func deliveries() -> [Delivery] {
        apns.control("deliveries", until: "end").dropLast().compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let callID = object["collapse_id"] as? String, let pushType = object["push_type"] as? Int,
                let apnsID = object["apns_id"] as? String
            else { return nil }
            return Delivery(callID: callID, pushType: pushType, apnsID: apnsID, keyID: object["key_id"] as? String)
        }
    }

    /// Waits for every outcome, then checks what the mock received against what was produced.
    func verdict(timeout: TimeInterval = 120) async throws -> Verdict {
        let receipts = try await waitForAllOutcomes(timeout: timeout)
        let deliveries = self.deliveries()
        var hungUp: Set<String> = []
        var rings = 0
        var seen: [String: Int] = [:]
        for delivery in deliveries {
            if delivery.pushType == 2 { hungUp.insert(delivery.callID) }
            if delivery.pushType == 1 && hungUp.contains(delivery.callID) { rings += 1 }
            seen[delivery.apnsID.lowercased(), default: 0] += 1
        }
        return Verdict(
            lost: produced.keys.filter { receipts[$0] == nil }.count,
            ringsAfterHangUp: rings,
            duplicatePushes: seen.values.reduce(0) { $0 + $1 - 1 },
            duplicateReceipts: receipts.values.reduce(0) { $0 + $1 - 1 },
            deliveries: deliveries.count
        )
    }

    /// The last log lines of every worker: those that ended first, in that order, then the running ones.
    var logs: String {
        (retiredLogs + workers.map { "\($0.key) (running):\n\($0.value.process.logTail)" }).joined(separator: "\n")
    }
}
