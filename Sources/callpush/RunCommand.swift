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
        problem. The file's apns.apps lists several apps, each with its own credentials. SIGHUP re-reads the file
        and every key and certificate: new pushes use them, old connections finish their pushes and close; a file
        that does not validate is refused with one log line and the old settings stay. SIGTERM or SIGINT drains in-flight events (up to --worker-drain-timeout), commits and exits 0; a
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
        ProcessMetrics.register(in: registry)
        // Started first, so its counters are in the registry from the first scrape on.
        let trimmer = resolved.mallocTrimInterval > .zero
            ? MallocTrimmer(interval: resolved.mallocTrimInterval, registry: registry, logger: logger) : nil
        let readiness = ReadinessFlag()
        let signals = ShutdownSignals()
        // SIGHUP's default action ends the process: until the reload handler is in place, one is ignored (the start
        // reads the configuration as it is then).
        signal(SIGHUP, SIG_IGN)
        var server: TelemetryServer?
        var router: APNsAppRouter?
        let worker: WorkerService
        do {
            server = try TelemetryServer(configuration: resolved.telemetry, registry: registry, readiness: readiness, logger: logger)
            let made = try APNsAppRouter(configuration: resolved.apps, registry: registry, logger: logger)
            router = made
            // Handshakes now, while the group is joined: not on the first call's path.
            made.connect(resolved.connectAtStart)
            worker = try WorkerService(
                configuration: resolved.worker, sender: made, timers: made.timers, registry: registry, readiness: readiness, logger: logger,
                onFatalError: { _ in signals.stop(.fatalError) }
            )
            try worker.start()
        } catch {
            // The connects already under way stop before the process exits.
            router?.shutdown()
            server?.stop()
            trimmer?.stop()
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            CommandLineTool.printError("cannot start: \(error)")
            return ExitStatus.failure
        }
        guard let router, let server else { return ExitStatus.failure }
        let reload = ReloadSignal { Self.reload(options, router: router, worker: worker, logger: logger) }
        logger.notice("callpush running", metadata: [
            "version": CallpushVersion.current, "kafka.group": resolved.worker.consumer.groupID, "malloc.arena_max": mallocArenas,
            "malloc.trim_interval_s": String(resolved.mallocTrimInterval.inSeconds),
        ])
        let reason = await signals.wait()
        logger.notice("shutting down", metadata: ["reason": reason == .fatalError ? "fatal error" : "signal"])
        reload.cancel()
        trimmer?.stop()
        await worker.shutdown()
        router.shutdown()
        server.stop()
        logger.notice("stopped", metadata: ["worker.unfinished": String(worker.inFlightCount)])
        return reason == .fatalError ? ExitStatus.failure : ExitStatus.success
    }

    /// SIGHUP: parses the flags, variables and config file again and applies the apps (credentials re-read) and the
    /// mapping; anything else that changed needs a restart. A configuration that does not validate is refused with
    /// one log line, and the one in force stays.
    static func reload(_ options: ParsedOptions, router: APNsAppRouter, worker: WorkerService, logger: Logger) {
        let resolved = (options.reparse?() ?? .success(options)).flatMap {
            RunSettings.resolve($0, hostname: ProcessInfo.processInfo.hostName)
        }
        switch resolved {
        case .failure(let failure):
            router.metrics.reloadCounter("failed").increment()
            logger.error("configuration reload refused; the previous configuration stays",
                         metadata: ["problems": failure.problems.joined(separator: "; ")])
        case .success(let settings):
            do {
                try router.apply(settings.apps)
                worker.updateMapping(settings.worker.dispatcher.mapping)
                logger.notice("configuration reloaded", metadata: ["apns.apps": String(settings.apps.apps.count)])
            } catch {
                logger.error("configuration reload refused; the previous configuration stays",
                             metadata: ["problems": error.reason])
            }
        }
    }
}

