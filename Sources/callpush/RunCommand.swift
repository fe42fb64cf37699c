import APNs
import Foundation
import Kafka
import Synchronization
import Telemetry
import Worker

/// `callpush run`: the production worker.
struct RunCommand: Command {
    let name = "run"
    let summary = "run a worker against real Kafka brokers and APNs (or an APNs-compatible endpoint)"
    let usage = """
        Usage: callpush run [options] [--config FILE]

        Joins the consumer group on the calls topic and its retry tiers, sends every event to APNs over persistent
        HTTP/2 connections, routes every answer (token invalidations, retry tiers, dead letters, receipts) and
        serves /metrics, /healthz and /readyz. Settings come from flags, CALLPUSH_* variables and a JSON file
        (flags win over variables, variables over the file); invalid settings are refused at start, one line per
        problem. SIGTERM or SIGINT drains in-flight events (up to --worker-drain-timeout), commits and exits 0; a
        second signal exits at once.
        """
    let examples = [
        "callpush run --kafka-brokers kafka:9092 --apns-key-file /secrets/AuthKey.p8 --apns-key-id ABC123DEFG \\\n"
            + "      --apns-team-id DEF123GHIJ",
        "CALLPUSH_KAFKA_BROKERS=kafka:9092 callpush run --config /etc/callpush/config.json",
        "callpush run --config config.json --print-config",
    ]
    let readsEnvironment = true
    var options: [OptionSpec] {
        RunSettings.specs + [OptionSpec("print-config", .boolean, "print the resolved settings and their sources, then exit")]
    }

    func run(_ options: ParsedOptions) async -> Int32 {
        let hostname = ProcessInfo.processInfo.hostName
        let resolved: RunSettings.Resolved
        switch RunSettings.resolve(options, hostname: hostname) {
        case .failure(let failure):
            for problem in failure.problems { CommandLineTool.printError(problem) }
            CommandLineTool.printError("see 'callpush run --help'")
            return ExitStatus.usage
        case .success(let value):
            resolved = value
        }
        if options.boolean("print-config") {
            for spec in RunSettings.specs {
                let value = options.string(spec.key).map(spec.shown) ?? "(unset)"
                Output.line("\(spec.key) = \(value)  [\(options.source(of: spec.key) ?? "unset")]")
            }
            return ExitStatus.success
        }
        let logger = Logger(label: "callpush", level: resolved.logLevel)
        let registry = MetricsRegistry()
        registry.gauge("callpush_build_info", help: "Build information; always 1.", labels: ["version": CallpushVersion.current]).set(1)
        let readiness = ReadinessFlag()
        let signals = ShutdownSignals()
        let server: TelemetryServer
        let client: APNsClient
        let worker: WorkerService
        do {
            server = try TelemetryServer(configuration: resolved.telemetry, registry: registry, readiness: readiness, logger: logger)
            client = try APNsClient(configuration: resolved.apns, metrics: registry, logger: logger)
            worker = try WorkerService(
                configuration: resolved.worker, sender: client, registry: registry, readiness: readiness, logger: logger,
                onFatalError: { _ in signals.stop(.fatalError) }
            )
            try worker.start()
        } catch {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            CommandLineTool.printError("cannot start: \(error)")
            return ExitStatus.failure
        }
        logger.notice("callpush running", metadata: ["version": CallpushVersion.current, "kafka.group": resolved.worker.consumer.groupID])
        let reason = await signals.wait()
        logger.notice("shutting down", metadata: ["reason": reason == .fatalError ? "fatal error" : "signal"])
        await worker.shutdown()
        client.shutdown()
        server.stop()
        logger.notice("stopped", metadata: ["worker.unfinished": String(worker.inFlightCount)])
        return reason == .fatalError ? ExitStatus.failure : ExitStatus.success
    }
}

