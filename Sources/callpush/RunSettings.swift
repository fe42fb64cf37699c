import APNs
import Foundation
import Kafka
import Telemetry
import Worker

/// Every setting of `callpush run`: flag `--kafka-brokers`, variable `CALLPUSH_KAFKA_BROKERS`, file key
/// `{"kafka":{"brokers":…}}`. Turns them into the worker, APNs client and telemetry configurations, refusing
/// invalid combinations with one line per problem.
enum RunSettings {
    static let specs: [OptionSpec] = [
        OptionSpec("kafka.brokers", .string, "Kafka bootstrap servers, HOST:PORT[,…] (required)"),
        OptionSpec("kafka.group", .string, default: "callpush", "consumer group shared by every worker"),
        OptionSpec("kafka.client-id", .string, "client id of this process (default: callpush-<hostname>)"),
        OptionSpec("kafka.session-timeout", .number(6...300), default: "10", "seconds before a silent (crashed) worker loses its partitions: its calls wait this long for a new owner"),
        OptionSpec("kafka.rebalance", .choice(KafkaConsumerConfiguration.Rebalancing.allCases.map(\.rawValue)), default: "cooperative", "group protocol: cooperative moves only the partitions that change owner (the others never stop); eager stops every partition at each change. Every worker of a group must use the same one"),
        OptionSpec("kafka.instance-id", .string, "static group membership (group.instance.id): a name that stays with the worker across restarts, e.g. the StatefulSet pod name; unique per worker"),
        OptionSpec("kafka.calls-topic", .string, default: "calls", "topic of incoming call events"),
        OptionSpec("kafka.retry-tiers", .string, default: "5s,30s,2m", "delays of the retry tiers, in order (ms, s, m, h; each 100ms…1h)"),
        OptionSpec("kafka.retry-topic-prefix", .string, default: "calls.retry.", "retry tier topic = prefix + delay"),
        OptionSpec("kafka.max-attempts", .integer(1...20), "attempts per event before it is dead-lettered (default: one more than the tiers; more repeat the last tier)"),
        OptionSpec("kafka.dlq-topic", .string, default: "calls.dlq", "dead-letter topic"),
        OptionSpec("kafka.invalidation-topic", .string, default: "apns.tokens.invalidated", "topic of dead device tokens"),
        OptionSpec("kafka.outcomes-topic", .string, default: "calls.outcomes", "topic of delivery receipts"),
        OptionSpec("kafka.receipts", .boolean, default: "false", "produce a receipt per event to the outcomes topic"),
        OptionSpec("kafka.linger", .number(0...1000), default: "1", "milliseconds the worker's producer gathers records before a produce request (librdkafka linger.ms): more costs less CPU per record, and each outcome is final that much later"),
        OptionSpec("kafka.compression", .choice(["lz4", "zstd", "gzip", "snappy", "none"]), default: "lz4", "codec of every record callpush writes (retries, dead letters, invalidations, receipts): their consumers must read it"),
        KafkaPropertiesOption.spec,
        OptionSpec("kafka.commit-interval", .number(0.05...60), default: "0.5", "seconds between offset commits (a crash sends again what finished since the last one)"),
        OptionSpec("worker.max-in-flight", .integer(1...1_000_000), default: "10000", "events in flight per process before partitions pause"),
        OptionSpec("worker.max-in-flight-per-partition", .integer(1...1_000_000), default: "1000", "events in flight per partition before it pauses"),
        OptionSpec("worker.backlog-scans", .choice(["on", "off"]), default: "on", "scan a newly assigned partition's backlog for hang-ups before its incoming calls ring, and what lies before it before retries from there ring (a second Kafka client while it scans); off: the read-ahead alone, bounded by half the in-flight limits"),
        OptionSpec("worker.ended-calls", .integer(1_000...20_000_000), default: "100000", "ended calls each worker remembers for 10 minutes, 34 bytes each, so a retry or replay of an incoming call after its hang-up is dropped: at least the hang-ups one worker handles in the longest ring timeout plus the longest retry tier (alert CallpushEndedCallMemoryShort)"),
        OptionSpec("worker.drain-timeout", .number(1...600), default: "25", "seconds a graceful shutdown waits for in-flight events"),
        OptionSpec("apns.connections", .integer(1...64), default: "2", "HTTP/2 connections per APNs environment"),
        OptionSpec("apns.event-loops", .integer(1...64), default: "2", "threads the APNs connections are spread over"),
        OptionSpec("apns.request-timeout", .number(0.1...120), default: "10", "seconds before an unanswered push is retried"),
        OptionSpec("apns.ping-interval", .number(1...3600), default: "60", "seconds of idleness before a PING"),
        OptionSpec("apns.connect-at-start", .choice(["all", "production", "sandbox", "none"]), default: "all", "environments whose connections open at start instead of at their first push"),
        OptionSpec("apns.app-max-in-flight", .integer(1...1_000_000), default: "5000", "pushes in flight per credential when several are configured; more are retried later"),
    ] + APNsOptions(prefix: "apns.").specs + [
        OptionSpec("mapping.bundle-id", .string, "send every push under this bundle id instead of the event's topic"),
        OptionSpec("mapping.allowed-bundle-ids", .string, "comma-separated bundle ids; events for others are dead-lettered"),
        OptionSpec("mapping.incoming-title", .string, default: "Incoming call", "title when the caller has no name"),
        OptionSpec("mapping.incoming-body", .string, default: "Incoming call", "body of incoming-call alerts"),
        OptionSpec("mapping.incoming-category", .string, default: "INCOMING_CALL", "aps.category of incoming-call alerts"),
        OptionSpec("mapping.hangup-body", .string, default: "Call ended", "body of hang-up alerts"),
        OptionSpec("mapping.hangup-category", .string, default: "CALL_ENDED", "aps.category of hang-up alerts"),
        OptionSpec("mapping.title-loc-key", .string, "title-loc-key of incoming-call alerts (localised in the app)"),
        OptionSpec("mapping.loc-key", .string, "loc-key of incoming-call alerts (caller name as loc-args)"),
        OptionSpec("mapping.sound", .string, "aps.sound of alerts (default none: the extension rings)"),
        OptionSpec("malloc.trim-interval", .number(0...3600), default: "30", "seconds between returns of malloc's free memory to the kernel (malloc_trim); 0: never"),
        OptionSpec("metrics.host", .string, default: "0.0.0.0", "address of the /metrics, /healthz, /readyz server"),
        OptionSpec("metrics.port", .integer(0...65535), default: "9464", "port of that server"),
        OptionSpec("log.level", .choice(LogLevel.allCases.map(\.description)), default: "info", "log level"),
    ]

    struct Resolved {
        var worker: WorkerConfiguration
        /// The apps (`apns.apps` of the config file, or the credential flags as one app serving every bundle id).
        var apps: APNsAppsConfiguration
        var telemetry: TelemetryServerConfiguration
        var logLevel: LogLevel
        /// The environments whose APNs connections open at start (`apns.connect-at-start`). Default: both.
        var connectAtStart: [APNsEnvironment] = APNsEnvironment.allCases
        /// Time between ``MallocTrimmer`` trims; zero: no trimming. Default: ``MallocTrimmer/defaultInterval``.
        var mallocTrimInterval: Duration = MallocTrimmer.defaultInterval
    }

    static func resolve(_ options: ParsedOptions, hostname: String) -> Result<Resolved, OptionParser.Failure> {
        var problems: [String] = []
        var worker = WorkerConfiguration()
        let brokers = options.string("kafka.brokers") ?? ""
        if brokers.isEmpty { problems.append("--kafka-brokers (CALLPUSH_KAFKA_BROKERS) is required") }
        let clientID = options.string("kafka.client-id") ?? "callpush-\(hostname)"
        worker.callsTopic = options.defaulted("kafka.calls-topic")
        worker.consumer.bootstrapServers = brokers
        worker.consumer.groupID = options.defaulted("kafka.group")
        worker.consumer.clientID = clientID
        let session = options.defaultedNumber("kafka.session-timeout")
        worker.consumer.sessionTimeout = .milliseconds(Int(session * 1000))
        worker.consumer.groupInstanceID = options.string("kafka.instance-id").flatMap { $0.isEmpty ? nil : $0 }
        worker.consumer.rebalancing = KafkaConsumerConfiguration.Rebalancing(rawValue: options.defaulted("kafka.rebalance")) ?? .cooperative
        worker.consumer.backPressure.maxInFlight = options.defaultedInteger("worker.max-in-flight")
        worker.consumer.backPressure.maxInFlightPerPartition = options.defaultedInteger("worker.max-in-flight-per-partition")
        worker.backlogScans = options.defaulted("worker.backlog-scans") == "on"
        worker.dispatcher.calls.endedCallCapacity = options.defaultedInteger("worker.ended-calls")
        worker.consumer.closeDrainTimeout = .milliseconds(Int(options.defaultedNumber("worker.drain-timeout") * 1000))
        worker.consumer.autoCommitInterval = .milliseconds(Int(options.defaultedNumber("kafka.commit-interval") * 1000))
        worker.producer.bootstrapServers = brokers
        worker.producer.clientID = clientID
        worker.producer.compression = options.defaulted("kafka.compression")
        worker.producer.linger = .microseconds(Int(options.defaultedNumber("kafka.linger") * 1000))
        switch KafkaPropertiesOption.parse(options.defaulted("kafka.properties")) {
        case .success(let properties):
            worker.consumer.additionalProperties.merge(properties) { _, new in new }
            worker.producer.additionalProperties.merge(properties) { _, new in new }
            let refused = Set((worker.consumer.problems + worker.producer.problems).map(\.reason))
            problems += refused.sorted().map { "--kafka-properties: \($0)" }
        case .failure(let failure):
            problems += failure.problems
        }
        let prefix = options.defaulted("kafka.retry-topic-prefix")
        var tiers: [RetryPolicy.Tier] = []
        for label in options.list("kafka.retry-tiers") {
            guard let milliseconds = milliseconds(label) else {
                problems.append("--kafka-retry-tiers: '\(label)' is not a delay like 500ms, 5s, 2m or 1h")
                continue
            }
            guard retryTierDelays.contains(milliseconds) else {
                problems.append("--kafka-retry-tiers: '\(label)' is outside 100ms…1h (a retry later than an hour outlives every call it could ring)")
                continue
            }
            if let same = tiers.first(where: { $0.delay == .milliseconds(milliseconds) }) {
                problems.append("--kafka-retry-tiers: '\(label)' repeats the delay of \(same.topic); give each tier its own delay")
                continue
            }
            tiers.append(.init(topic: prefix + label, delay: .milliseconds(milliseconds)))
        }
        worker.dispatcher.routing.retry.tiers = tiers
        let attempts = options.integer("kafka.max-attempts") ?? tiers.count + 1
        if attempts < tiers.count + 1 {
            let unused = tiers[max(0, attempts - 1)...].map(\.topic).joined(separator: ",")
            problems.append("--kafka-max-attempts \(attempts) never reaches retry tier \(unused): use at least \(tiers.count + 1) or drop those tiers")
        } else if attempts > 1 && tiers.isEmpty {
            problems.append("--kafka-max-attempts \(attempts) needs at least one retry tier in --kafka-retry-tiers")
        }
        worker.dispatcher.routing.retry.maximumAttempts = attempts
        worker.dispatcher.routing.deadLetterTopic = options.defaulted("kafka.dlq-topic")
        worker.dispatcher.routing.invalidatedTokensTopic = options.defaulted("kafka.invalidation-topic")
        worker.dispatcher.routing.outcomesTopic = options.defaulted("kafka.outcomes-topic")
        worker.dispatcher.routing.emitReceipts = options.boolean("kafka.receipts")
        applyMapping(options, to: &worker.dispatcher.mapping)

        let apnsOptions = APNsOptions(prefix: "apns.")
        var apps: [APNsAppConfiguration] = []
        var fileApps: [APNsAppsFile.Entry]?
        if let configFile = options.configFile {
            switch APNsAppsFile.read(configFile) {
            case .success(let entries): fileApps = entries
            // The file's apps are refused: their problems, not also the missing credential flags.
            case .failure(let failure): fileApps = []; problems += failure.problems
            }
        }
        let credentialFlags = ["key-file", "certificate", "pkcs12"].filter { options.has("apns." + $0) }
        if let fileApps {
            if !credentialFlags.isEmpty {
                problems.append("give either apns.apps in the config file or --apns-\(credentialFlags[0]), not both")
            }
            apps = fileApps.map(\.app)
            for entry in fileApps where !entry.mapping.isEmpty {
                var own = worker.dispatcher.mapping
                applyAlerts({ entry.mapping[String($0.dropFirst("mapping.".count))] ?? options.string($0) }, to: &own)
                worker.dispatcher.mapping.appAlerts[entry.app.bundleID ?? ""] = own.alerts
            }
        } else {
            switch apnsOptions.credentials(options) {
            case .success(let value): apps = [APNsAppConfiguration(bundleID: nil, credentials: value)]
            case .failure(let failure): problems += failure.problems
            }
        }
        var endpoint: APNsEndpoint?
        switch apnsOptions.customEndpoint(options) {
        case .success(let value): endpoint = value
        case .failure(let failure): problems += failure.problems
        }
        var telemetry = TelemetryServerConfiguration()
        telemetry.host = options.defaulted("metrics.host")
        telemetry.port = options.defaultedInteger("metrics.port")
        guard problems.isEmpty, let first = apps.first else { return .failure(.init(problems: problems)) }
        var apns = APNsClientConfiguration(credentials: first.credentials, customEndpoint: endpoint)
        apns.connectionsPerPool = options.defaultedInteger("apns.connections")
        apns.eventLoops = options.defaultedInteger("apns.event-loops")
        apns.requestTimeout = .milliseconds(Int(options.defaultedNumber("apns.request-timeout") * 1000))
        apns.pingInterval = .milliseconds(Int(options.defaultedNumber("apns.ping-interval") * 1000))
        let appsConfiguration = APNsAppsConfiguration(
            apps: apps, client: apns, maximumInFlightPerCredential: options.defaultedInteger("apns.app-max-in-flight"))
        let appProblems = appsConfiguration.problems
        guard appProblems.isEmpty else { return .failure(.init(problems: appProblems)) }
        let level = LogLevel(name: options.defaulted("log.level")) ?? .info
        var resolved = Resolved(worker: worker, apps: appsConfiguration, telemetry: telemetry, logLevel: level)
        resolved.mallocTrimInterval = .milliseconds(Int(options.defaultedNumber("malloc.trim-interval") * 1000))
        resolved.connectAtStart = switch options.defaulted("apns.connect-at-start") {
        case "none": []
        case "all": APNsEnvironment.allCases
        case let one: APNsEnvironment(rawValue: one).map { [$0] } ?? APNsEnvironment.allCases
        }
        return .success(resolved)
    }

    private static func applyMapping(_ options: ParsedOptions, to mapping: inout MappingConfiguration) {
        mapping.bundleIDOverride = options.string("mapping.bundle-id")
        if options.has("mapping.allowed-bundle-ids") { mapping.allowedBundleIDs = Set(options.list("mapping.allowed-bundle-ids")) }
        mapping.sound = options.string("mapping.sound")
        applyAlerts({ options.string($0) }, to: &mapping)
    }

    /// The alert texts, categories and loc keys from `value` (a `mapping.…` name → its value, if set): the settings
    /// of the whole process, or an app's own over them.
    private static func applyAlerts(_ value: (String) -> String?, to mapping: inout MappingConfiguration) {
        var incoming = mapping.alertDefaults(for: .incoming)
        incoming.title = value("mapping.incoming-title") ?? incoming.title
        incoming.body = value("mapping.incoming-body") ?? incoming.body
        incoming.category = value("mapping.incoming-category") ?? incoming.category
        incoming.titleLocKey = value("mapping.title-loc-key")
        incoming.locKey = value("mapping.loc-key")
        mapping.alerts[.incoming] = incoming
        var hangup = mapping.alertDefaults(for: .hangup)
        hangup.body = value("mapping.hangup-body") ?? hangup.body
        hangup.category = value("mapping.hangup-category") ?? hangup.category
        mapping.alerts[.hangup] = hangup
    }

    /// The delays a retry tier may have, in milliseconds: 100 ms to 1 h.
    static let retryTierDelays: ClosedRange<Int64> = 100...3_600_000

    /// `500ms`, `5s`, `2m`, `1h` → milliseconds (`Int64.max` when they would not fit); nil for anything else.
    static func milliseconds(_ label: String) -> Int64? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]
        for (suffix, factor) in units where label.hasSuffix(suffix) {
            guard let value = Int64(label.dropLast(suffix.count)), value > 0 else { return nil }
            return value.saturatingMultiply(factor)
        }
        return nil
    }
}
