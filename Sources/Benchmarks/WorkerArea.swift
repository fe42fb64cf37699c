import APNs
import APNsMock
import BenchSupport
import EmbeddedPipeline
import Foundation
import TLS
import HTTP2
import Kafka
import Telemetry
import Worker
import ToolSupport

/// Area `worker`: the real `callpush run` in a process of its own, with `callpush kafka-mock` and `callpush
/// mock-apns` in two more, receipts on. A backlog of call events is produced beforehand (the target's measurement);
/// then the worker starts, and once its first outcomes are final its CPU time (from `/proc`) and final outcomes are
/// read together, and again when every outcome is final: start-up and the group join are left out. Its CPU per
/// event over that span is compared with the sum of its parts measured in this process against the same servers in
/// the same repetition: the HTTP/2 client's CPU per request to nghttpd, the consumer's CPU per message and the
/// producer's CPU per record (one receipt per event). Its events/s over the span is compared with the slower of the
/// consumer's rate and APNsClient's rate against the same mock. Each repetition then runs a second worker with
/// `--kafka-linger 5` on a fresh cluster with the same backlog (no target: what the receipts' linger costs;
/// docs/performance.md, "Producer linger").
enum WorkerArea {
    /// The linger of the second, informational worker of each repetition, in milliseconds.
    static let longLinger = "5"

    static let partitions = 8
    static let connections = 2
    /// About the size of a generated call event.
    static let valueSize = 330

    /// Events per run; at about 400 bytes a record the mock broker's ~5 MB per partition holds them all.
    static func events(_ options: BenchOptions) -> Int { options.quick ? 5_000 : 60_000 }

    struct Run {
        var eventsPerSecond: Double
        var workerCPUPerEvent: Double
        /// The same backlog handled by a worker with ``WorkerArea/longLinger``.
        var longLinger: WorkerSpan
        var clientCPUPerRequest: Double
        /// The same client sending the worker's own requests (``workerRequests(count:bed:documentRoot:)``).
        var clientCPUPerWorkerRequest: Double
        var consumerCPUPerMessage: Double
        var producerCPUPerRecord: Double
        var consumePerSecond: Double
        var clientPerSecond: Double
        /// The worker's CPU per event by thread group (``WorkerProcess/CPUReading``): where it goes.
        var threadCPUPerEvent: [String: Double]
        /// The mock APNs server's and the mock cluster's CPU per event over the worker's span (their processes).
        var mockAPNsCPUPerEvent: Double
        var mockKafkaCPUPerEvent: Double
        /// The machine's cores.
        var cores: Int

        var partsCPU: Double { clientCPUPerRequest + consumerCPUPerMessage + producerCPUPerRecord }
        /// The parts with the client sending the worker's requests: what nghttp2, OpenSSL and librdkafka cost for the
        /// worker's work before any of the worker's own code runs.
        var partsWithWorkerRequestsCPU: Double {
            clientCPUPerWorkerRequest + consumerCPUPerMessage + producerCPUPerRecord
        }
        /// The events/s this machine would allow a worker that cost exactly ``partsWithWorkerRequestsCPU``, the peers
        /// costing what they did per event: every core busy with the worker's libraries and the two mocks. The
        /// worker's events/s target cannot be met where this is below 0.6 × min(consume, client).
        var ceilingPerSecond: Double {
            Double(cores) / (partsWithWorkerRequestsCPU + mockAPNsCPUPerEvent + mockKafkaCPUPerEvent)
        }

        var summary: String {
            "worker \(BenchFormat.rate(eventsPerSecond)), \(micro(workerCPUPerEvent)) CPU/event; parts: client "
                + "\(micro(clientCPUPerRequest))/req + consumer \(micro(consumerCPUPerMessage))/msg + producer "
                + "\(micro(producerCPUPerRecord))/record = \(micro(partsCPU)) (client with the worker's requests "
                + "\(micro(clientCPUPerWorkerRequest))/req: \(micro(partsWithWorkerRequestsCPU))); "
                + "consume \(BenchFormat.rate(consumePerSecond)), "
                + "APNsClient \(BenchFormat.rate(clientPerSecond))\n    worker threads: "
                + threadCPUPerEvent.sorted { $0.value > $1.value }.map { "\($0.key) \(micro($0.value))" }
                    .joined(separator: ", ")
                + "\n    peers per event: mock-apns \(micro(mockAPNsCPUPerEvent)), kafka-mock \(micro(mockKafkaCPUPerEvent)); "
                + "a worker at its parts' cost would reach \(BenchFormat.rate(ceilingPerSecond)) on \(cores) cores"
                + "\n    with --kafka-linger \(WorkerArea.longLinger): \(BenchFormat.rate(longLinger.eventsPerSecond)), "
                + "\(micro(longLinger.cpuPerEvent)) CPU/event, librdkafka's threads \(micro(longLinger.threadCPUPerEvent["librdkafka"] ?? 0))"
        }

        private func micro(_ seconds: Double) -> String { String(format: "%.1f µs", seconds * 1e6) }
    }

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        guard let tools = ExternalTool.require(["nghttpd"], for: "worker area (client CPU per request to nghttpd)"),
              let nghttpd = tools["nghttpd"] else { return result }
        let bed: MockAPNsBed
        do { bed = try MockAPNsBed.make() } catch {
            print("  FAILED worker area: \(error)")
            return result
        }
        defer { bed.remove() }
        let workerRequests: [HTTP2Request]
        do {
            workerRequests = try Self.workerRequests(count: workerRequestVariants, bed: bed,
                                                     documentRoot: bed.certificate.documentRoot)
        } catch {
            print("  FAILED worker area: \(error)")
            return result
        }
        var runs: [Run] = []
        for _ in 0..<options.repetitions {
            do {
                let run = try await measure(options, bed: bed, nghttpdPath: nghttpd, workerRequests: workerRequests)
                print("  \(run.summary)")
                runs.append(run)
            } catch {
                print("  FAILED worker: \(error)")
            }
        }
        guard !runs.isEmpty else { return result }
        // The target is against the libraries doing the worker's own requests (its pushes' headers and provider
        // token cost nghttp2 and OpenSSL more than bare requests do); the bare parts are shown beside it.
        result.report(BenchRatio(area: .worker, name: "worker cpu/event vs sum of its parts",
                                 value: Median.of(runs.map(\.workerCPUPerEvent)), reference: Median.of(runs.map(\.partsCPU)),
                                 target: nil))
        result.report(BenchRatio(area: .worker, name: "worker cpu/event vs its parts with the worker's own requests",
                                 value: Median.of(runs.map(\.workerCPUPerEvent)),
                                 reference: Median.of(runs.map(\.partsWithWorkerRequestsCPU)), target: .atMost(2.0)))
        // The events/s target's reference, and the ceiling's: the slower of the worker's two ends.
        let slowerEnd = Median.of(runs.map { min($0.consumePerSecond, $0.clientPerSecond) })
        result.report(BenchRatio(area: .worker, name: "worker events/s vs min(consume, apns client)",
                                 value: Median.of(runs.map(\.eventsPerSecond)), reference: slowerEnd, target: .atLeast(0.6)))
        result.report(BenchRatio(area: .worker, name: "events/s ceiling on this machine vs min(consume, apns client)",
                                 value: Median.of(runs.map(\.ceilingPerSecond)), reference: slowerEnd, target: nil))
        result.report(BenchRatio(area: .worker, name: "worker cpu/event with --kafka-linger \(longLinger) vs sum of its parts",
                                 value: Median.of(runs.map(\.longLinger.cpuPerEvent)),
                                 reference: Median.of(runs.map(\.partsCPU)), target: nil))
        return result
    }

    /// One repetition; `workerRequests` are the client part's second run (``workerRequests(count:bed:documentRoot:)``,
    /// their paths already in nghttpd's document root).
    private static func measure(
        _ options: BenchOptions, bed: MockAPNsBed, nghttpdPath: String, workerRequests: [HTTP2Request]
    ) async throws -> Run {
        let events = events(options)
        let duration = Duration.milliseconds(Int(options.seconds * 1000))
        var topics = WorkerConfiguration()
        topics.dispatcher.routing.emitReceipts = true
        func cluster() throws(BenchFailure) -> (process: ChildProcess, brokers: String) {
            try bed.startKafkaMock(partitions: partitions, topics: topics.allTopics + ["probe"])
        }
        let (kafka, brokers) = try cluster()
        defer { kafka.terminate(grace: .seconds(1)) }
        let (mock, port) = try bed.startMock(["--certificate", bed.certificate.certificatePath,
                                              "--private-key", bed.certificate.privateKeyPath])
        defer { mock.terminate(grace: .seconds(1)) }

        // The parts, in this process.
        let probe = try await KafkaThroughputProbe.run(messages: events, partitions: partitions, valueSize: valueSize,
                                                        bootstrapServers: brokers)
        let target = try Nghttpd.start(path: nghttpdPath, certificate: bed.certificate)
        var load = HTTP2LoadGenerator.Configuration(
            port: target.port, tls: TLSClientConfiguration(caFile: bed.certificate.certificatePath),
            connections: connections, streamsPerConnection: 100, duration: duration, threads: 1)
        let http2 = try await HTTP2LoadGenerator(configuration: load).run()
        load.variants = workerRequests
        let http2WorkerRequests = try await HTTP2LoadGenerator(configuration: load).run()
        target.stop()
        guard http2WorkerRequests.failed == 0, http2WorkerRequests.statuses.keys.allSatisfy({ $0 == 200 }) else {
            throw BenchFailure("nghttpd did not answer the worker's requests with 200: \(http2WorkerRequests), "
                + "statuses \(http2WorkerRequests.statuses)")
        }
        let endpoint = APNsEndpoint.custom(host: "127.0.0.1", port: port, caFile: bed.certificate.certificatePath)
        let client = try await APNsThroughputBenchmark.measureClient(
            endpoint: endpoint,
            credentials: .token(keyPath: bed.keyPath, keyID: MockAPNsBed.keyID, teamID: MockAPNsBed.teamID),
            connections: connections, concurrency: connections * 100, duration: duration)

        let worker = try await runWorker(options, bed: bed, brokers: brokers, callsTopic: topics.callsTopic, port: port,
                                         arguments: [], peers: (apns: mock, kafka: kafka))
        // The same backlog on a fresh cluster (the mock broker keeps about 5 MB per partition), a longer linger.
        let second = try cluster()
        defer { second.process.terminate(grace: .seconds(1)) }
        let longLinger = try await runWorker(options, bed: bed, brokers: second.brokers,
                                             callsTopic: topics.callsTopic, port: port,
                                             arguments: ["--kafka-linger", Self.longLinger], peers: (apns: mock, kafka: second.process))
        return Run(
            eventsPerSecond: worker.eventsPerSecond,
            workerCPUPerEvent: worker.cpuPerEvent,
            longLinger: longLinger,
            clientCPUPerRequest: http2.cpuSecondsPer100k / 100_000,
            clientCPUPerWorkerRequest: http2WorkerRequests.cpuSecondsPer100k / 100_000,
            consumerCPUPerMessage: probe.consumeCPUSeconds / Double(max(1, probe.consumed)),
            producerCPUPerRecord: probe.produceCPUSeconds / Double(events),
            consumePerSecond: probe.consumedPerSecond,
            clientPerSecond: client.pushesPerSecond,
            threadCPUPerEvent: worker.threadCPUPerEvent,
            mockAPNsCPUPerEvent: worker.peerCPUPerEvent.apns,
            mockKafkaCPUPerEvent: worker.peerCPUPerEvent.kafka,
            cores: ProcessInfo.processInfo.activeProcessorCount)
    }

    /// Distinct requests the client part with the worker's requests sends in turn.
    static let workerRequestVariants = 1024

    /// What `callpush run`'s pool sends for `count` incoming calls like the area's (the events mapped by the worker's
    /// ``PushMapper`` with its default texts; the pool's header list with the bed's provider token): a device token,
    /// `apns-id`, `apns-collapse-id` and payload of their own each, so nghttp2 Huffman-codes and never indexes what
    /// it does for the worker. Each path is made an empty file under nghttpd's `documentRoot`, which then answers 200
    /// with no body, as APNs answers a push it accepts.
    private static func workerRequests(count: Int, bed: MockAPNsBed, documentRoot: String) throws -> [HTTP2Request] {
        let mapper = PushMapper()
        try FileManager.default.createDirectory(atPath: documentRoot + "/3/device", withIntermediateDirectories: true)
        let createdAt = Int64(Date().timeIntervalSince1970 * 1000)
        var requests: [HTTP2Request] = []
        for number in 0..<count {
            let event = try CallEvent(
                eventID: UUID().uuidString.lowercased(), type: .incoming, callID: "call-0a1b2c-\(number)",
                deviceToken: try DeviceToken(
                    String(repeating: "0", count: 56) + String(format: "%08x", (number &* 2_654_435_761) & 0xFFFF_FFFF)),
                push: .alert, topic: MockAPNsBed.topic, environment: .production, createdAtMilliseconds: createdAt,
                ringTimeoutSeconds: 30, caller: CallEvent.Caller(name: "Caller \(number % 97)", id: "u-\(number % 1000)"))
            let request = try mapper.map(event)
            _ = FileManager.default.createFile(atPath: documentRoot + request.path, contents: Data())
            requests.append(request.http2Request(authority: "127.0.0.1", authorization: bed.authorization))
        }
        return requests
    }

    /// What one worker did from its first final outcomes to its last: events/s, CPU per event in all and by thread
    /// group.
    struct WorkerSpan {
        var eventsPerSecond: Double
        var cpuPerEvent: Double
        var threadCPUPerEvent: [String: Double]
        /// The mock APNs server's and the mock cluster's CPU per event over the same span.
        var peerCPUPerEvent: (apns: Double, kafka: Double)
    }

    /// One `callpush run` (receipts on, plus `arguments`) over a backlog produced to `callsTopic` at `brokers`
    /// beforehand, against the `peers` processes (the mock APNs server at `port`, the mock cluster at `brokers`).
    private static func runWorker(
        _ options: BenchOptions, bed: MockAPNsBed, brokers: String, callsTopic: String, port: Int, arguments: [String],
        peers: (apns: ChildProcess, kafka: ChildProcess)
    ) async throws -> WorkerSpan {
        var producerConfiguration = KafkaProducerConfiguration()
        producerConfiguration.bootstrapServers = brokers
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: .disabled)
        let generator = CallTrafficGenerator(producer: producer, topic: callsTopic, bundleID: MockAPNsBed.topic,
                                             mix: PipelineArea.mix)
        let produced = await generator.run(rate: 10_000_000, count: events(options), duration: .seconds(120))
        await producer.close()
        let worker = try WorkerProcess.start(callpushPath: bed.callpushPath, arguments: [
            "--kafka-brokers", brokers, "--kafka-receipts", "--kafka-session-timeout", "6",
            "--apns-key-file", bed.keyPath, "--apns-key-id", MockAPNsBed.keyID, "--apns-team-id", MockAPNsBed.teamID,
            "--apns-endpoint", "127.0.0.1:\(port)", "--apns-ca-file", bed.certificate.certificatePath,
            "--apns-connections", String(connections),
        ] + arguments)
        defer { worker.process.terminate(grace: .seconds(1)) }
        func peersCPU() throws(BenchFailure) -> (apns: Double, kafka: Double) {
            guard let apns = ProcessStatistics.read(process: String(peers.apns.pid), threads: false),
                  let kafka = ProcessStatistics.read(process: String(peers.kafka.pid), threads: false)
            else { throw BenchFailure("cannot read the mock servers' CPU time") }
            return (apns.cpuSeconds, kafka.cpuSeconds)
        }
        let first = try await worker.firstFinalOutcomes(timeout: .seconds(60))
        let peersBefore = try peersCPU()
        try await worker.waitForFinalOutcomes(produced, timeout: .seconds(120))
        let elapsed = ContinuousClock.now - first.at
        guard let cpuAfter = worker.cpuReading else { throw BenchFailure("cannot read the worker's CPU time") }
        let peersAfter = try peersCPU()
        let measured = Double(max(1, produced - first.outcomes))
        return WorkerSpan(
            eventsPerSecond: measured / elapsed.inSeconds,
            cpuPerEvent: (cpuAfter.total - first.cpu.total) / measured,
            threadCPUPerEvent: cpuAfter.threads.reduce(into: [:]) { perEvent, group in
                perEvent[group.key] = (group.value - (first.cpu.threads[group.key] ?? 0)) / measured
            },
            peerCPUPerEvent: ((peersAfter.apns - peersBefore.apns) / measured, (peersAfter.kafka - peersBefore.kafka) / measured))
    }
}
