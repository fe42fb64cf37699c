import Foundation
import TestSupport
import Testing

/// `callpush run` as a process between `callpush kafka-mock` and `callpush mock-apns`: configuration errors,
/// a SIGTERM drain without duplicates, a SIGKILL + restart without loss, what a downstream kafka-python consumer
/// reads of its records, and the Kafka settings operators tune (linger, compression, librdkafka's debug log).
@Suite(.serialized) struct RunCommandTests {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"

    /// A kafka-mock, a mock-apns in token mode with a fresh key, and the worker's flags pointing at both.
    final class Bed {
        let directory: URL
        let kafka: CallpushProcess
        let apns: CallpushProcess
        let workerArguments: [String]

        init(latencyMilliseconds: Int, apnsArguments: [String] = []) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-run-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let key = directory.appendingPathComponent("AuthKey.p8").path
            let generated = try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
            #expect(generated.status == 0)
            kafka = try CallpushProcess([
                "kafka-mock", "--partitions", "4",
                "--topics", "calls,calls.retry.1s,calls.retry.2s,calls.dlq,apns.tokens.invalidated,calls.outcomes",
            ])
            apns = try CallpushProcess([
                "mock-apns", "--key-file", key, "--key-id", keyID, "--team-id", teamID, "--bundle-id", "com.example.app",
                "--latency-ms", String(latencyMilliseconds),
            ] + apnsArguments)
            let parts = apns.firstLine.split(separator: " ")
            workerArguments = [
                "run", "--kafka-brokers", kafka.firstLine, "--kafka-group", "run-test", "--kafka-receipts",
                "--kafka-retry-tiers", "1s,2s", "--apns-key-file", key, "--apns-key-id", keyID, "--apns-team-id", teamID,
                "--apns-endpoint", String(parts[0]), "--apns-ca-file", String(parts[1].dropFirst(3)),
                "--metrics-port", "0", "--log-level", "warning", "--kafka-session-timeout", "6",
            ]
        }

        /// An incoming alert call for com.example.app, created now, ringing 600 s: the event these tests send.
        static func incomingCall(eventID: String, callID: String, token: String) -> String {
            """
            {"event_id":"\(eventID)","type":"incoming","call_id":"\(callID)","device_token":"\(token)","push":"alert",\
            "topic":"com.example.app","environment":"production","created_at":\(Int64(Date().timeIntervalSince1970 * 1000)),\
            "ring_timeout_s":600}
            """
        }

        /// The worker's flags with `flag`'s value replaced (e.g. a known `--metrics-port` instead of 0).
        func workerArguments(setting flag: String, to value: String) -> [String] {
            var arguments = workerArguments
            arguments[arguments.firstIndex(of: flag)! + 1] = value
            return arguments
        }

        func produce(_ count: Int, prefix: String) throws {
            let lines = (0..<count).map { index in
                Self.incomingCall(eventID: "\(prefix)-\(index)", callID: "c-\(prefix)-\(index)", token: String(format: "%064x", index + 1))
            }
            let result = try CallpushProcess.run(["produce", "--brokers", kafka.firstLine], input: lines.joined(separator: "\n"))
            #expect(result.stdout.hasSuffix("produced \(count), failed 0\n"), "\(result.stderr)")
        }

        /// event_id → how many receipts carry it.
        func receipts() throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for case let id as String in try OutcomeReceipts.read(brokers: kafka.firstLine).map({ $0["event_id"] }) {
                counts[id, default: 0] += 1
            }
            return counts
        }

        func waitForReceipts(atLeast count: Int, timeout: TimeInterval = 90) async throws -> [String: Int] {
            var receipts: [String: Int] = [:]
            try await Eventually.waitUntil(timeout: .seconds(timeout), interval: .milliseconds(500)) {
                receipts = try self.receipts()
                return receipts.count >= count
            }
            return receipts
        }

        deinit {
            apns.terminate()
            kafka.terminate()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func invalidConfigurationIsRefusedOneLinePerProblem() throws {
        let result = try CallpushProcess.run(["run", "--apns-key-file", "/nonexistent.p8", "--apns-key-id", "short"])
        #expect(result.status == 64)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("callpush: --kafka-brokers (CALLPUSH_KAFKA_BROKERS) is required"))
        #expect(lines.contains("callpush: cannot read /nonexistent.p8"))
        #expect(lines.contains("callpush: --apns-key-id must be the 10-character Key ID of /nonexistent.p8"))
        #expect(lines.last == "callpush: see 'callpush run --help'")
    }

    @Test func environmentAndFileAreLayeredUnderFlags() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-\(UUID()).json")
        try #"{"kafka":{"brokers":"file:9092","group":"from-file","calls-topic":"file-calls"},"apns":{"pkcs12":"/etc/hostname","pkcs12-password":"s3cret"}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try CallpushProcess.run(
            ["run", "--config", file.path, "--kafka-calls-topic", "flag-calls", "--print-config"],
            environment: ["CALLPUSH_KAFKA_GROUP": "from-env"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("kafka.brokers = file:9092  [file]\n"))
        #expect(result.stdout.contains("kafka.group = from-env  [environment CALLPUSH_KAFKA_GROUP]\n"))
        #expect(result.stdout.contains("kafka.calls-topic = flag-calls  [flag]\n"))
        #expect(result.stdout.contains("apns.pkcs12-password = (hidden)"))
        #expect(!result.stdout.contains("s3cret"))
    }

    @Test func retryAndKafkaSettingsAreRefusedNotMisread() throws {
        func problems(_ arguments: [String]) throws -> [String] {
            let result = try CallpushProcess.run(["run", "--kafka-brokers", "localhost:9092"] + arguments)
            #expect(result.status == 64)
            return result.stderr.split(separator: "\n").map(String.init)
        }
        #expect(try problems(["--kafka-retry-tiers", "1s,1000ms,2s"]).contains(
            "callpush: --kafka-retry-tiers: '1000ms' repeats the delay of calls.retry.1s; give each tier its own delay"))
        #expect(try problems(["--kafka-max-attempts", "2"]).contains(
            "callpush: --kafka-max-attempts 2 never reaches retry tier calls.retry.30s,calls.retry.2m: use at least 4 or drop those tiers"))
        #expect(try problems(["--kafka-retry-tiers", "", "--kafka-max-attempts", "3"]).contains(
            "callpush: --kafka-max-attempts 3 needs at least one retry tier in --kafka-retry-tiers"))
        let kafka = try problems(["--kafka-properties", "sesion.timeout.ms=1;fetch.wait.max.ms=x"])
        #expect(kafka.contains { $0.hasPrefix("callpush: --kafka-properties: ") && $0.contains("\"sesion.timeout.ms\"") }, "\(kafka)")
        #expect(kafka.contains { $0.hasPrefix("callpush: --kafka-properties: ") && $0.contains("\"fetch.wait.max.ms\"") }, "\(kafka)")
        #expect(!kafka.joined().contains(".swift:"), "no source locations")
        // More attempts than tiers repeat the last tier: accepted.
        let repeated = try CallpushProcess.run([
            "run", "--kafka-brokers", "localhost:9092", "--kafka-max-attempts", "7", "--apns-pkcs12", "/etc/hostname",
            "--apns-pkcs12-password", "x", "--print-config",
        ])
        #expect(repeated.status == 0)
    }

    @Test func missingTopicsStopTheStartWithOneLine() throws {
        let kafka = try CallpushProcess(["kafka-mock", "--topics", "calls,calls.dlq"])
        defer { kafka.terminate() }
        let key = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-\(UUID()).p8").path
        _ = try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        defer { try? FileManager.default.removeItem(atPath: key) }
        let result = try CallpushProcess.run([
            "run", "--kafka-brokers", kafka.firstLine, "--apns-key-file", key, "--apns-key-id", Self.keyID,
            "--apns-team-id", Self.teamID, "--metrics-port", "0", "--log-level", "critical",
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("callpush: cannot start: UNKNOWN_TOPIC_OR_PART: topic calls.retry.5s, calls.retry.30s, calls.retry.2m"),
                "\(result.stderr)")
    }

    @Test func unknownConfigFileKeyIsRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-\(UUID()).json")
        try #"{"kafka":{"brokerz":"x"}}"#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try CallpushProcess.run(["run", "--config", file.path])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown key kafka.brokerz"))
    }

    @Test func sigtermDrainsWithoutDuplicatesAndARestartResumes() async throws {
        let bed = try Bed(latencyMilliseconds: 20)
        try bed.produce(600, prefix: "a")
        var arguments = bed.workerArguments
        arguments[arguments.firstIndex(of: "--log-level")! + 1] = "notice"
        let first = try CallpushProcess(arguments, readFirstLine: false)
        _ = try await bed.waitForReceipts(atLeast: 100)
        // `run` gives each busy thread its own malloc arena (other commands two), unless the environment chose a
        // limit: the start-up line says which.
        let environment = ProcessInfo.processInfo.environment
        let arenas = environment["MALLOC_ARENA_MAX"].map { "\($0) (MALLOC_ARENA_MAX)" }
            ?? (environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.arena_max") == true ? "GLIBC_TUNABLES" : "8")
        #expect(first.log.contains(#""malloc.arena_max":"\#(arenas)""#), "\(first.logTail)")
        // Its busy threads carry their own names, for `top -H` and perf (else Dispatch's, inherited).
        let tasks = "/proc/\(first.pid)/task"
        let named = try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap { task in
            (try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8)).map { (task, $0.trimmingCharacters(in: .newlines)) }
        }
        let names = named.map(\.1)
        #expect(Set(["kafka-consume", "kafka-produce", "http2-loop-0", "http2-loop-1", "telemetry-http"]).isSubset(of: names),
                "\(names)")
        // The event loops run in 100 µs time slices, where the kernel shows a thread's slice (`se.slice`).
        for (task, name) in named where name.hasPrefix("http2-loop-") {
            guard let slice = SchedulerSlice.value(inSchedFile: "\(tasks)/\(task)/sched") else { continue }
            #expect(slice == "100000", "\(name): se.slice \(slice)")
        }
        #expect(first.terminate() == 0)
        try bed.produce(400, prefix: "b")
        let second = try CallpushProcess(bed.workerArguments, readFirstLine: false)
        let receipts = try await bed.waitForReceipts(atLeast: 1000)
        #expect(second.terminate() == 0)
        #expect(receipts.count == 1000, "every event has a receipt; restarted worker said:\n\(second.logTail)")
        #expect(receipts.values.allSatisfy { $0 == 1 }, "a graceful drain leaves no duplicates")
    }

    /// A worker with `--kafka-instance-id` (static membership) joins with it, works, and says at a graceful stop that
    /// it does not leave the group, so its partitions wait a session timeout unless it comes back with that id.
    /// (librdkafka's mock cluster ignores static membership: that a restart keeps the partitions shows only on Kafka.)
    @Test func aStaticMemberSaysItsPartitionsWaitWhenItStops() async throws {
        let bed = try Bed(latencyMilliseconds: 5)
        try bed.produce(50, prefix: "static")
        let worker = try CallpushProcess(bed.workerArguments + ["--kafka-instance-id", "callpush-0"], readFirstLine: false)
        let receipts = try await bed.waitForReceipts(atLeast: 50)
        #expect(receipts.count == 50, "\(worker.logTail)")
        #expect(worker.terminate() == 0)
        #expect(worker.log.contains("static member callpush-0 stops without leaving the group: its partitions wait up to "
            + "kafka.session-timeout (6 s) for another worker unless it starts again with the same id"), "\(worker.logTail)")
    }

    @Test func aSecondSignalExitsAtOnce() async throws {
        let bed = try Bed(latencyMilliseconds: 20_000)  // answers take 20 s: a graceful drain would wait
        try bed.produce(50, prefix: "s")
        let port = FreePort.next()
        let worker = try CallpushProcess(bed.workerArguments(setting: "--metrics-port", to: String(port)), readFirstLine: false)
        var inFlight = 0
        try await Eventually.waitUntil(timeout: .seconds(30), interval: .milliseconds(200)) {
            let metrics = try ExternalTool.run(["curl", "-s", "localhost:\(port)/metrics"]).output
            inFlight = ExpositionSeries.value("callpush_inflight_events", in: metrics).map(Int.init) ?? 0
            return inFlight > 0
        }
        #expect(inFlight > 0, "events are waiting for APNs when the signals come")
        let started = Date()
        worker.child.signal(SIGTERM)
        // The second signal comes while the first one's drain waits: readiness goes off as the drain starts.
        var ready: Double?
        try await Eventually.waitUntil(timeout: .seconds(30), interval: .milliseconds(100)) {
            let metrics = try ExternalTool.run(["curl", "-s", "localhost:\(port)/metrics"]).output
            ready = ExpositionSeries.value("callpush_ready", in: metrics)
            return ready == 0
        }
        #expect(ready == 0, "the worker is draining when the second signal comes: \(worker.logTail)")
        worker.child.signal(SIGTERM)
        #expect(worker.child.wait(timeout: .seconds(60)) == 130, "\(worker.logTail)")
        #expect(Date().timeIntervalSince(started) < 15, "it did not wait for the 20 s answers")
    }

    /// A retry tier's record is held until its `x-not-before`, but never longer than the tier's delay from when the
    /// worker reads it: a due time a day ahead (its writer's clock ran fast) must not stall the partition behind it,
    /// and a record without the header whose Kafka timestamp is the largest Kafka accepts must not stop the worker
    /// (timestamp + delay overflowed: every worker of the group crashed on it, again after each restart). An
    /// independent client (kafka-python) writes the records, as any producer may.
    @Test func retryRecordsDueFarAheadWaitOneTierDelayAtMost() async throws {
        let bed = try Bed(latencyMilliseconds: 0)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func event(_ id: String) -> String {
            Bed.incomingCall(eventID: id, callID: "c-\(id)", token: String(repeating: "ab", count: 32))
        }
        // Partition 0: a record due in a day, then an ordinary one behind it. Partition 1: the end of time, no header.
        let records: [(partition: Int, id: String, timestamp: Int64?, notBefore: Int64?)] = [
            (0, "day-ahead", nil, now + 86_400_000), (0, "behind-it", nil, now), (1, "end-of-time", .max, nil),
        ]
        let script = """
            import json, sys
            from kafka import KafkaProducer
            producer = KafkaProducer(bootstrap_servers=sys.argv[1].split(","), acks="all")
            for r in json.loads(sys.argv[2]):
                headers = [("x-attempt", b"2")] + ([("x-not-before", str(r["notBefore"]).encode())] if r["notBefore"] else [])
                producer.send("calls.retry.1s", key=r["key"].encode(), value=r["value"].encode(), partition=r["partition"],
                              timestamp_ms=r["timestamp"], headers=headers).get(timeout=30)
            producer.close()
            """
        let json = try JSONSerialization.data(withJSONObject: records.map { record -> [String: Any] in
            ["partition": record.partition, "key": "c-\(record.id)", "value": event(record.id),
             "timestamp": record.timestamp.map { NSNumber(value: $0) } ?? NSNull(),
             "notBefore": record.notBefore.map { NSNumber(value: $0) } ?? NSNull()]
        })
        let produced = try ExternalTool.run([PythonInterpreter.path(importing: ["kafka"]), "-c", script, bed.kafka.firstLine,
                                     String(decoding: json, as: UTF8.self)], timeout: 60)
        #expect(produced.status == 0, "kafka-python: \(produced.output)")
        let worker = try CallpushProcess(bed.workerArguments, readFirstLine: false)
        let receipts = try await bed.waitForReceipts(atLeast: 3, timeout: 40)
        #expect(receipts == ["day-ahead": 1, "behind-it": 1, "end-of-time": 1], "the worker said:\n\(worker.logTail)")
        #expect(worker.terminate() == 0, "the worker kept running: \(worker.logTail)")
    }

    /// What callpush writes is read by an independent consumer group (kafka-python, as a downstream service would):
    /// a receipt per event, the dead letter with its reason header, the invalidated token. Records are lz4 by
    /// default, which kafka-python reads only with its optional `lz4` module: without it, it fails on them, and
    /// `--kafka-compression none` is what such a consumer needs.
    @Test(arguments: ["lz4", "none"]) func downstreamKafkaPythonReadsWhatCallpushWrites(compression: String) async throws {
        let deadToken = String(repeating: "dd", count: 32)
        let bed = try Bed(latencyMilliseconds: 0, apnsArguments: ["--unregistered-tokens", deadToken])
        var events = (1...3).map { index in
            ["c-\(compression)-\(index)",
             Bed.incomingCall(eventID: "e-\(index)", callID: "c-\(compression)-\(index)", token: String(format: "%064x", index))]
        }
        events.append(["c-dead", Bed.incomingCall(eventID: "e-dead", callID: "c-dead", token: deadToken)])
        events.append(["c-broken", #"{"event_id":"e-broken","type":"#])
        let python = PythonInterpreter.path(importing: ["kafka", "lz4"])
        let json = String(decoding: try JSONSerialization.data(withJSONObject: events), as: UTF8.self)
        let produced = try ExternalTool.run([python, "-c", Self.downstreamScript, bed.kafka.firstLine, "produce", json], timeout: 60)
        #expect(produced.status == 0, "kafka-python: \(produced.output)")
        let worker = try CallpushProcess(bed.workerArguments + ["--kafka-compression", compression], readFirstLine: false)
        #expect(try await bed.waitForReceipts(atLeast: 4, timeout: 40).count == 4, "\(worker.logTail)")

        let withoutCodec = try ChildProcess.run(
            [python, "-c", Self.downstreamScript, bed.kafka.firstLine, "read-without-lz4"], timeoutSeconds: 90)
        if compression == "lz4" {
            #expect(withoutCodec.status != 0 && withoutCodec.output.contains("UnsupportedCodecError"), "\(withoutCodec.output)")
        }
        // Uncompressed records need no codec: what the consumer without lz4 read is checked below.
        let read = compression == "none"
            ? withoutCodec : try ChildProcess.run([python, "-c", Self.downstreamScript, bed.kafka.firstLine, "read"], timeoutSeconds: 90)
        #expect(worker.terminate() == 0, "\(worker.logTail)")
        #expect(read.status == 0, "kafka-python: \(read.output)")
        let topics = try #require(
            (try? JSONSerialization.jsonObject(with: Data(read.stdout.utf8))) as? [String: [[String: Any]]], "\(read.output)")
        var outcomes: [String: [String]] = [:]  // receipts by key
        for record in topics["calls.outcomes"] ?? [] {
            let value = try JSONSerialization.jsonObject(with: Data(((record["value"] as? String) ?? "").utf8)) as? [String: Any]
            outcomes[record["key"] as? String ?? "", default: []].append(value?["outcome"] as? String ?? "?")
        }
        #expect(outcomes == ["c-\(compression)-1": ["delivered"], "c-\(compression)-2": ["delivered"],
                             "c-\(compression)-3": ["delivered"], "c-dead": ["invalidated"], "c-broken": ["dead_lettered"]])
        let deadLetters = topics["calls.dlq"] ?? []
        #expect(deadLetters.map { $0["key"] as? String } == ["c-broken"])
        #expect((deadLetters.first?["headers"] as? [String: String])?["x-dlq-reason"] == "invalid_json")
        #expect(deadLetters.first?["value"] as? String == events[4][1], "the original event, byte for byte")
        let invalidations = topics["apns.tokens.invalidated"] ?? []
        #expect(invalidations.map { $0["key"] as? String } == [deadToken])
        let invalidation = try JSONSerialization.jsonObject(with: Data(((invalidations.first?["value"] as? String) ?? "{}").utf8))
        #expect((invalidation as? [String: Any])?["reason"] as? String == "Unregistered")
    }

    /// `--kafka-linger` holds the worker's records, not its pushes: with 400 ms, every outcome's records wait that long
    /// to be acknowledged (the `acknowledge` stage), while every push was answered at once.
    @Test func lingerDelaysOutcomesNotPushes() async throws {
        let bed = try Bed(latencyMilliseconds: 0)
        try bed.produce(20, prefix: "l")
        let port = FreePort.next()
        let worker = try CallpushProcess(
            bed.workerArguments(setting: "--metrics-port", to: String(port)) + ["--kafka-linger", "400"], readFirstLine: false)
        #expect(try await bed.waitForReceipts(atLeast: 20, timeout: 40).count == 20, "\(worker.logTail)")
        let metrics = try ExternalTool.run(["curl", "-s", "localhost:\(port)/metrics"]).output
        #expect(worker.terminate() == 0, "\(worker.logTail)")
        func count(_ series: String) -> Double? { ExpositionSeries.value(series, in: metrics) }
        let acknowledged = #"callpush_worker_stage_seconds_bucket{stage="acknowledge","#
        #expect(count(acknowledged + #"le="+Inf"}"#) == 20, "\(metrics)")
        #expect(count(acknowledged + #"le="0.25"}"#) == 0, "records were acknowledged before the 400 ms linger")
        #expect(count(#"callpush_apns_request_duration_seconds_bucket{le="0.2"}"#) == 20, "pushes were not held")
    }

    /// `--worker-ended-calls` sizes the worker's memory of ended calls: 1 200 hang-ups fill a memory of 1 000, which
    /// then reaches back less than its 10 minutes (`callpush_ended_calls_reach_seconds`).
    @Test func endedCallsSizesTheMemoryOfEndedCalls() async throws {
        let bed = try Bed(latencyMilliseconds: 0)
        let hangUps = (0..<1_200).map { index in
            Bed.incomingCall(eventID: "h-\(index)", callID: "c-h-\(index)", token: String(format: "%064x", index + 1))
                .replacingOccurrences(of: #""type":"incoming""#, with: #""type":"hangup""#)
        }
        let produced = try CallpushProcess.run(["produce", "--brokers", bed.kafka.firstLine], input: hangUps.joined(separator: "\n"))
        #expect(produced.stdout.hasSuffix("produced 1200, failed 0\n"), "\(produced.stderr)")
        let port = FreePort.next()
        let worker = try CallpushProcess(
            bed.workerArguments(setting: "--metrics-port", to: String(port)) + ["--worker-ended-calls", "1000"], readFirstLine: false)
        #expect(try await bed.waitForReceipts(atLeast: 1_200, timeout: 60).count == 1_200, "\(worker.logTail)")
        let metrics = try ExternalTool.run(["curl", "-s", "localhost:\(port)/metrics"]).output
        #expect(worker.terminate() == 0, "\(worker.logTail)")
        #expect(ExpositionSeries.value("callpush_ended_calls", in: metrics) == 1_000, "\(metrics)")
        #expect((ExpositionSeries.value("callpush_ended_calls_reach_seconds", in: metrics) ?? 600) < 600)
    }

    /// `run` opens its APNs connections at start, before any call arrives, and the first call goes out on them: no
    /// connect or TLS handshake on its path (docs/operations.md "APNs connections at start"); with
    /// `--apns-connect-at-start none` they open at the first call, as a library client's do.
    @Test(arguments: ["all", "none"]) func apnsConnectionsOpenAtStart(setting: String) async throws {
        let bed = try Bed(latencyMilliseconds: 0)
        let port = FreePort.next()
        let worker = try CallpushProcess(
            bed.workerArguments(setting: "--metrics-port", to: String(port)) + ["--apns-connect-at-start", setting],
            readFirstLine: false)
        let endpoint = bed.apns.firstLine.split(separator: " ")[0]
        let open = #"callpush_apns_connections{endpoint="\#(endpoint)"}"#
        let opened = #"callpush_apns_connection_events_total{endpoint="\#(endpoint)",event="opened"}"#
        func metrics() -> String { (try? ExternalTool.run(["curl", "-s", "localhost:\(port)/metrics"]).output) ?? "" }
        // Ready: the group is joined and partitions are assigned; connections opened at start are up by then. Without
        // them, a second more shows that none opens late.
        let expected: Double = setting == "all" ? 2 : 0
        var before = ""
        await Eventually.waitUntil(timeout: .seconds(30), interval: .milliseconds(200)) {
            before = metrics()
            return ExpositionSeries.value("callpush_ready", in: before) == 1 && ExpositionSeries.value(open, in: before) == expected
        }
        if expected == 0 {
            // Asserting absence (no connection opens late): a bounded wait after readiness.
            try await Task.sleep(for: .seconds(1))
            before = metrics()
        }
        #expect(ExpositionSeries.value("callpush_ready", in: before) == 1, "\(worker.logTail)")
        #expect(ExpositionSeries.value(open, in: before) == expected, "\(before)\n\(worker.logTail)")
        #expect(ExpositionSeries.sum("callpush_apns_requests_total", in: before) == 0)
        try bed.produce(1, prefix: "w")
        #expect(try await bed.waitForReceipts(atLeast: 1, timeout: 40).count == 1, "\(worker.logTail)")
        let after = metrics()
        #expect(worker.terminate() == 0, "\(worker.logTail)")
        #expect(ExpositionSeries.sum("callpush_apns_requests_total", in: after) == 1, "\(after)")
        #expect(ExpositionSeries.value(opened, in: after) == 2, "\(after)")
    }

    /// librdkafka's troubleshooting switch, `--kafka-properties debug=…`, logs at `trace`: docs/operations.md
    /// "Logs". At `debug` its lines stay out (they are many), at `trace` they are there with their facility.
    @Test func librdkafkaDebugContextsLogAtTrace() async throws {
        let bed = try Bed(latencyMilliseconds: 0)
        func groupStateLines(logLevel: String) async throws -> [Substring] {
            let worker = try CallpushProcess(
                bed.workerArguments(setting: "--log-level", to: logLevel) + ["--kafka-properties", "debug=cgrp"],
                readFirstLine: false)
            await Eventually.waitUntil(timeout: .seconds(30), interval: .milliseconds(200)) {
                worker.log.contains("partitions assigned")
            }
            #expect(worker.terminate() == 0, "\(worker.logTail)")
            return worker.log.split(separator: "\n").filter { $0.contains(#""kafka.facility":"CGRPSTATE""#) }
        }
        #expect(try await groupStateLines(logLevel: "debug").isEmpty)
        let traced = try await groupStateLines(logLevel: "trace")
        #expect(!traced.isEmpty && traced.allSatisfy { $0.contains(#""level":"trace""#) }, "\(traced.prefix(3))")
    }

    /// kafka-python, as an independent client: `produce JSON` writes [[key, value]…] to `calls` (its default
    /// partitioner is the Java client's murmur2); `read` consumes the topics callpush writes as one group until each has
    /// its expected count (or 45 s pass) and prints them as JSON; `read-without-lz4` does so with the lz4 module
    /// unavailable, as on a host where the optional codec is not installed.
    static let downstreamScript = """
        import json, sys, time
        if sys.argv[2] == "read-without-lz4":
            sys.modules["lz4"] = None
        from kafka import KafkaConsumer, KafkaProducer
        brokers = sys.argv[1].split(",")
        if sys.argv[2] == "produce":
            producer = KafkaProducer(bootstrap_servers=brokers, acks="all")
            for key, value in json.loads(sys.argv[3]):
                producer.send("calls", key=key.encode(), value=value.encode()).get(timeout=30)
            producer.close()
            sys.exit(0)
        expected = {"calls.outcomes": 5, "calls.dlq": 1, "apns.tokens.invalidated": 1}
        consumer = KafkaConsumer(bootstrap_servers=brokers, group_id="downstream-" + sys.argv[2], auto_offset_reset="earliest")
        consumer.subscribe(list(expected))
        read = {topic: [] for topic in expected}
        deadline = time.time() + 45
        while time.time() < deadline and any(len(read[topic]) < count for topic, count in expected.items()):
            for records in consumer.poll(timeout_ms=500).values():
                for record in records:
                    read[record.topic].append({"key": record.key.decode(), "value": record.value.decode(),
                                               "headers": {name: value.decode() for name, value in record.headers}})
        consumer.close()
        print(json.dumps(read))
        """

    @Test func sigkillAndRestartLoseNothing() async throws {
        let bed = try Bed(latencyMilliseconds: 400)
        try bed.produce(1500, prefix: "k")
        let first = try CallpushProcess(bed.workerArguments + ["--worker-max-in-flight", "100"], readFirstLine: false)
        let beforeKill = try await bed.waitForReceipts(atLeast: 200)
        first.kill()
        #expect(beforeKill.count < 1500, "the worker was killed mid-run")
        let second = try CallpushProcess(bed.workerArguments, readFirstLine: false)
        let receipts = try await bed.waitForReceipts(atLeast: 1500)
        #expect(second.terminate() == 0)
        #expect(receipts.count == 1500, "nothing is lost; restarted worker said:\n\(second.logTail)")
        let duplicates = receipts.values.reduce(0) { $0 + $1 - 1 }
        print("SIGKILL restart: \(duplicates) duplicate receipts of 1500 events")
        #expect(duplicates <= 1500, "duplicates are bounded by what was in flight")
    }
}
