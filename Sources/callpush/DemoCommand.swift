import APNs
import EmbeddedPipeline
import Foundation
import Telemetry
import Worker

/// `callpush demo`: the whole pipeline on the embedded default, with live progress and a summary.
struct DemoCommand: Command {
    let name = "demo"
    let summary = "run the whole pipeline on an embedded Kafka and mock APNs with synthetic call traffic"
    let usage = """
        Usage: callpush demo [options]

        Starts librdkafka's embedded mock Kafka cluster, the mock APNs server (HTTP/2 over TLS on 127.0.0.1, with a
        fault mix), callpush workers and a generator of call traffic: incoming calls, hang-ups, calls to dead device
        tokens, malformed events and already-expired calls. Shows progress every second, then a summary: the count
        of every outcome, their sum against the events produced, latency percentiles and pushes/s. Exits 1 if any
        event was lost (its outcomes do not add up).
        """
    let examples = [
        "callpush demo",
        "callpush demo --rate 1000 --duration 20 --faults storm",
        "callpush demo --events 5000 --workers 2 --metrics-port 9464",
    ]
    let options = [
        OptionSpec("rate", .number(1...100_000), default: "200", "calls per second the generator starts"),
        OptionSpec("duration", .number(1...3600), default: "40", "seconds of generated traffic"),
        OptionSpec("events", .integer(1...100_000_000), "stop after this many events instead"),
        OptionSpec("faults", .choice(DemoFaultMix.allCases.map(\.rawValue)), default: "realistic", "mock APNs fault mix"),
        OptionSpec("workers", .integer(1...8), default: "1", "workers in the consumer group"),
        OptionSpec("connections", .integer(1...16), default: "2", "HTTP/2 connections per APNs pool"),
        OptionSpec("partitions", .integer(1...64), default: "4", "partitions per topic"),
        OptionSpec("drain-timeout", .number(1...600), default: "30", "seconds to wait for the last outcomes"),
        OptionSpec("metrics-port", .integer(0...65535), default: "0", "serve /metrics on this port during the demo (0: off)"),
        OptionSpec("log-level", .choice(LogLevel.allCases.map(\.description)), default: "error", "log level of the components"),
    ]

    func run(_ options: ParsedOptions) async -> Int32 {
        let signals = ShutdownSignals()
        let mix = DemoFaultMix(rawValue: options.defaulted("faults")) ?? .realistic
        var configuration = EmbeddedPipelineConfiguration()
        configuration.mockRecorderCapacity = 0  // the demo prints counts; kept requests would only cost the mock
        configuration.faults = mix.faults
        configuration.partitions = options.defaultedInteger("partitions")
        configuration.apnsConnections = options.defaultedInteger("connections")
        let logger = Logger(label: "demo", level: LogLevel(name: options.defaulted("log-level")) ?? .error,
                            sink: FileDescriptorLogSink(fileDescriptor: 2))
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        let pipeline: EmbeddedPipeline
        do {
            pipeline = try EmbeddedPipeline(configuration: configuration, registry: registry, logger: logger)
        } catch {
            CommandLineTool.printError("cannot start the embedded pipeline: \(error)")
            return ExitStatus.failure
        }
        let readiness = ReadinessFlag()
        var server: TelemetryServer?
        let port = options.defaultedInteger("metrics-port")
        if port > 0 {
            var serverConfiguration = TelemetryServerConfiguration()
            serverConfiguration.port = port
            server = try? TelemetryServer(configuration: serverConfiguration, registry: registry, readiness: readiness)
        }
        let rate = options.defaultedNumber("rate")
        let duration = options.defaultedNumber("duration")
        Output.line("callpush demo")
        Output.line("  kafka      embedded mock cluster, \(configuration.brokers) brokers at \(pipeline.cluster.bootstrapServers)")
        Output.line("  apns       mock server at \(pipeline.mock.endpoint.host):\(pipeline.mock.endpoint.port), \(configuration.apnsConnections) HTTP/2 connections per pool")
        Output.line("  faults     \(mix.rawValue): \(mix.summary)")
        Output.line("  traffic    \(options.integer("events").map { "\($0) events" } ?? "\(Int(duration)) s") at \(Int(rate)) calls/s")
        do {
            for _ in 0..<options.defaultedInteger("workers") { try pipeline.startWorker(readiness: readiness) }
        } catch {
            CommandLineTool.printError("cannot start a worker: \(error)")
            await pipeline.shutdown()
            return ExitStatus.failure
        }
        Output.line("  waiting for the consumer group to form…")
        let joinDeadline = ContinuousClock.now + .seconds(30)
        while !readiness.isReady && ContinuousClock.now < joinDeadline { try? await Task.sleep(for: .milliseconds(50)) }

        let producer: CallTrafficGenerator
        do {
            producer = CallTrafficGenerator(
                producer: try pipeline.makeProducer(), topic: pipeline.workerConfiguration.callsTopic,
                bundleID: configuration.bundleID)
        } catch {
            CommandLineTool.printError("cannot create the traffic producer: \(error)")
            await pipeline.shutdown()
            return ExitStatus.failure
        }
        let progress = DemoProgress(pipeline: pipeline, registry: registry)
        let started = ContinuousClock.now
        let generation = Task {
            await producer.run(rate: rate, count: options.integer("events"), duration: .milliseconds(Int(duration * 1000)))
        }
        while !producer.isFinished {
            if signals.signalled { generation.cancel() }
            try? await Task.sleep(for: .seconds(1))
            Output.progress(progress.line(elapsed: ContinuousClock.now - started, produced: producer.produced.succeeded))
        }
        let produced = await generation.value
        let drainDeadline = ContinuousClock.now + .milliseconds(Int(options.defaultedNumber("drain-timeout") * 1000))
        while progress.terminalOutcomes < produced && ContinuousClock.now < drainDeadline && !signals.signalled {
            try? await Task.sleep(for: .milliseconds(250))
            Output.progress(progress.line(elapsed: ContinuousClock.now - started, produced: produced))
        }
        let elapsed = ContinuousClock.now - started
        Output.progress("")
        server?.stop()
        await pipeline.shutdown()
        let report = DemoSummary(
            outcomes: pipeline.outcomes, produced: produced, produceFailures: producer.produced.failed,
            latency: pipeline.latency, elapsed: elapsed, registry: registry
        )
        Output.line(report.table)
        return report.lost == 0 ? ExitStatus.success : ExitStatus.failure
    }
}
