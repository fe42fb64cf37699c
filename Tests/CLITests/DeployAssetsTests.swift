import Foundation
import TestSupport
import Testing
@preconcurrency import Glibc

/// The deployment assets (Deploy/, Grafana/) checked against the real `callpush` binary and docs/operations.md:
/// every file parses, names refer to things that exist, every CALLPUSH_* variable is a real `callpush run`
/// setting, the Kubernetes grace period covers the drain, promtool accepts the rules and their unit tests, and
/// every metric the dashboard and the alerts query is documented in docs/operations.md and actually exported.
@Suite struct DeployAssetsTests {
    // MARK: - Files

    static func path(_ relative: String) -> String { PackageRoot.url.appendingPathComponent(relative).path }

    static func text(_ relative: String) throws -> String { try String(contentsOfFile: path(relative), encoding: .utf8) }

    /// Every YAML document of a file, parsed by PyYAML (safe_load_all, merge keys resolved) and handed over as JSON.
    static func yaml(_ relative: String) throws -> [Any] {
        let script = "import yaml, json, sys; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))"
        let result = try run([PythonInterpreter.path, "-c", script, path(relative)])
        #expect(result.status == 0, "\(relative): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [Any] ?? []
    }

    static func yamlObject(_ relative: String) throws -> [String: Any] {
        try yaml(relative).first as? [String: Any] ?? [:]
    }

    /// The Kubernetes object of a kind among Deploy/kubernetes/*.yaml.
    static func kubernetes(_ kind: String) throws -> [String: Any] {
        for file in try FileManager.default.contentsOfDirectory(atPath: path("Deploy/kubernetes")).sorted()
        where file.hasSuffix(".yaml") {
            for case let object as [String: Any] in try yaml("Deploy/kubernetes/" + file) where object["kind"] as? String == kind {
                return object
            }
        }
        Issue.record("no \(kind) in Deploy/kubernetes")
        return [:]
    }

    /// Runs a tool found on PATH (or an absolute path) to completion, stdout and stderr apart.
    static func run(_ arguments: [String], timeout: Int = 60) throws -> ProcessResult {
        try ChildProcess.run(["timeout", String(timeout)] + arguments, currentDirectory: PackageRoot.url.path,
                             timeoutSeconds: Double(timeout + 5))
    }

    // MARK: - callpush's own answers

    /// The CALLPUSH_* variables `callpush run --help` lists: the real settings.
    static func runVariables() throws -> Set<String> {
        let help = try CallpushProcess.run(["run", "--help"])
        #expect(help.status == 0)
        return Set(matches(of: #"\(env (CALLPUSH_[A-Z0-9_]+)\)"#, in: help.stdout))
    }

    static func matches(of pattern: String, in text: String, group: Int = 1) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: group), in: text).map { String(text[$0]) }
        }
    }

    /// The "Observability" table of docs/operations.md: metric name → type.
    static func documentedMetrics() throws -> [String: String] {
        let operations = try text("docs/operations.md")
        guard let start = operations.range(of: "\n## Observability\n") else { return [:] }
        let section = operations[start.upperBound...]
        let end = section.range(of: "\n## ").map { section[..<$0.lowerBound] } ?? section
        var metrics: [String: String] = [:]
        for line in end.split(separator: "\n") where line.hasPrefix("| `callpush_") || line.hasPrefix("| `process_") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            metrics[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[1]
        }
        return metrics
    }

    /// Metric names (series names as queried, `_bucket` etc. included) in a PromQL expression.
    static func metricNames(in expression: String) -> Set<String> {
        var names = Set(matches(of: #"\b(callpush_[a-z0-9_]+)"#, in: expression))
        if expression.range(of: #"\bup\{"#, options: .regularExpression) != nil { names.insert("up") }
        return names
    }

    /// The metric family a series name belongs to, given the documented histograms.
    static func family(_ series: String, histograms: Set<String>) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where series.hasSuffix(suffix) {
            let base = String(series.dropLast(suffix.count))
            if histograms.contains(base) { return base }
        }
        return series
    }

    /// Every PromQL expression of the dashboard (panel targets and template variable queries).
    static func dashboardExpressions() throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path("Grafana/dashboards/callpush.json")))
        let dashboard = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        var expressions: [String] = []
        for case let panel as [String: Any] in dashboard["panels"] as? [Any] ?? [] {
            for case let target as [String: Any] in panel["targets"] as? [Any] ?? [] {
                if let expr = target["expr"] as? String { expressions.append(expr) }
            }
        }
        let templating = dashboard["templating"] as? [String: Any]
        for case let variable as [String: Any] in templating?["list"] as? [Any] ?? [] {
            if let query = (variable["query"] as? [String: Any])?["query"] as? String { expressions.append(query) }
        }
        return expressions
    }

    static func alertExpressions() throws -> [String: String] {
        var expressions: [String: String] = [:]
        let rules = try yamlObject("Deploy/prometheus/alerts.yml")
        for case let group as [String: Any] in rules["groups"] as? [Any] ?? [] {
            for case let rule as [String: Any] in group["rules"] as? [Any] ?? [] {
                expressions[rule["alert"] as? String ?? rule["record"] as? String ?? "?"] = rule["expr"] as? String
            }
        }
        return expressions
    }

    // MARK: - Parsing

    @Test func everyYAMLAndJSONFileParses() throws {
        let files = [
            "Deploy/compose.yaml", "Deploy/prometheus/prometheus.yml", "Deploy/prometheus/alerts.yml",
            "Deploy/prometheus/alerts.test.yml", "Deploy/prometheus/alerts.expiry.test.yml",
            "Grafana/provisioning/datasources/prometheus.yaml",
            "Grafana/provisioning/dashboards/callpush.yaml",
        ] + (try FileManager.default.contentsOfDirectory(atPath: Self.path("Deploy/kubernetes")).sorted().map { "Deploy/kubernetes/" + $0 })
        for file in files {
            let documents = try Self.yaml(file)
            #expect(!documents.isEmpty, "\(file) is empty")
            for document in documents { #expect(document is [String: Any], "\(file): a document is not a mapping") }
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.path("Grafana/dashboards/callpush.json")))
        #expect(try JSONSerialization.jsonObject(with: data) is [String: Any])
        #expect(FileManager.default.fileExists(atPath: Self.path("Deploy/Dockerfile")))
    }

    // MARK: - Compose

    @Test func composeIsConsistent() throws {
        let compose = try Self.yamlObject("Deploy/compose.yaml")
        let services = compose["services"] as? [String: [String: Any]] ?? [:]
        let volumes = Set((compose["volumes"] as? [String: Any] ?? [:]).keys)
        #expect(Set(["kafka", "topics", "mock-apns", "worker-1", "worker-2", "prometheus", "grafana"]).isSubset(of: Set(services.keys)))
        let variables = try Self.runVariables()
        #expect(variables.count >= 40, "callpush run --help lists \(variables.count) variables")
        var workers = 0
        for (name, service) in services {
            // depends_on (list or map) names existing services.
            let dependencies: [String] = (service["depends_on"] as? [String]) ?? Array((service["depends_on"] as? [String: Any] ?? [:]).keys)
            for dependency in dependencies { #expect(services[dependency] != nil, "\(name) depends on unknown service \(dependency)") }
            // Named volumes are declared; bind mounts exist (relative to Deploy/).
            for case let mount as String in service["volumes"] as? [Any] ?? [] {
                let source = String(mount.split(separator: ":")[0])
                if source.hasPrefix(".") || source.hasPrefix("/") {
                    let resolved = URL(fileURLWithPath: Self.path("Deploy")).appendingPathComponent(source).standardized.path
                    #expect(FileManager.default.fileExists(atPath: resolved), "\(name) mounts missing \(source)")
                } else {
                    #expect(volumes.contains(source), "\(name) mounts undeclared volume \(source)")
                }
            }
            if let build = service["build"] as? [String: Any] {
                let context = URL(fileURLWithPath: Self.path("Deploy")).appendingPathComponent(build["context"] as? String ?? ".")
                let dockerfile = context.appendingPathComponent(build["dockerfile"] as? String ?? "Dockerfile").path
                #expect(FileManager.default.fileExists(atPath: dockerfile), "\(name) builds from missing \(dockerfile)")
                if let stage = build["target"] as? String {
                    #expect(try Self.text("Deploy/Dockerfile").contains(" AS \(stage)\n"), "\(name): no stage \(stage)")
                }
            }
            // Every CALLPUSH_* variable is a real setting.
            let environment = service["environment"] as? [String: Any] ?? [:]
            for key in environment.keys where key.hasPrefix("CALLPUSH_") {
                let known = variables.contains(key)
                #expect(known, "compose service \(name) sets \(key), which callpush run does not know")
            }
            if (service["command"] as? [String])?.first == "run" {
                workers += 1
                #expect(environment["CALLPUSH_KAFKA_BROKERS"] as? String == "kafka:9092")
                let endpoint = environment["CALLPUSH_APNS_ENDPOINT"] as? String ?? ""
                #expect(services[String(endpoint.split(separator: ":").first ?? "")] != nil, "\(name) dials \(endpoint)")
                // The drain fits in the stop grace period.
                let drain = Double(environment["CALLPUSH_WORKER_DRAIN_TIMEOUT"] as? String ?? "25") ?? 25
                let grace = Double((service["stop_grace_period"] as? String ?? "10s").dropLast()) ?? 10
                #expect(grace >= drain + 10, "\(name): stop_grace_period \(grace)s < drain \(drain)s + 10")
            }
        }
        #expect(workers == 2)
        // Client ids are unique per worker.
        let clientIDs = services.values.compactMap { ($0["environment"] as? [String: Any])?["CALLPUSH_KAFKA_CLIENT_ID"] as? String }
        #expect(Set(clientIDs).count == clientIDs.count)

        // The mock's flags are real mock-apns options, and it serves the certificate the workers trust.
        let mock = services["mock-apns"]?["command"] as? [String] ?? []
        #expect(mock.first == "mock-apns")
        let mockHelp = try CallpushProcess.run(["mock-apns", "--help"]).stdout
        for flag in mock where flag.hasPrefix("--") { #expect(mockHelp.contains("  \(flag) "), "mock-apns has no \(flag)") }
        let certificate = mock.firstIndex(of: "--certificate").map { mock[$0 + 1] }
        let workerEnvironment = services["worker-1"]?["environment"] as? [String: Any] ?? [:]
        #expect(certificate != nil && certificate == workerEnvironment["CALLPUSH_APNS_CA_FILE"] as? String)
        #expect(mock.firstIndex(of: "--key-file").map { mock[$0 + 1] } == workerEnvironment["CALLPUSH_APNS_KEY_FILE"] as? String)
        #expect(mock.firstIndex(of: "--key-id").map { mock[$0 + 1] } == workerEnvironment["CALLPUSH_APNS_KEY_ID"] as? String)
        #expect(mock.firstIndex(of: "--team-id").map { mock[$0 + 1] } == workerEnvironment["CALLPUSH_APNS_TEAM_ID"] as? String)

        // Every callpush topic is created, all with one partition count, equal to the ScaledObject's.
        let topics = services["topics"]?["environment"] as? [String: Any] ?? [:]
        let created = Set((topics["TOPICS"] as? String ?? "").split(separator: " ").map(String.init))
        #expect(created == ["calls", "calls.retry.5s", "calls.retry.30s", "calls.retry.2m", "calls.dlq", "apns.tokens.invalidated", "calls.outcomes"])
        let partitions = Int(topics["PARTITIONS"] as? String ?? "") ?? 0
        let scaled = try Self.kubernetes("ScaledObject")
        let annotation = ((scaled["metadata"] as? [String: Any])?["annotations"] as? [String: Any])?["callpush.dev/partitions"] as? String
        #expect(partitions > 0 && annotation == String(partitions))
        #expect(workerEnvironment["CALLPUSH_KAFKA_RETRY_TIERS"] as? String == "5s,30s,2m")

        // Prometheus scrapes exactly the workers, on the metrics port they listen on.
        let prometheus = try Self.yamlObject("Deploy/prometheus/prometheus.yml")
        let job = (prometheus["scrape_configs"] as? [[String: Any]] ?? []).first { $0["job_name"] as? String == "callpush" }
        let targets = ((job?["static_configs"] as? [[String: Any]])?.first?["targets"] as? [String]) ?? []
        #expect(Set(targets) == ["worker-1:9464", "worker-2:9464"])
    }

    // MARK: - Kubernetes

    @Test func kubernetesManifestsAreConsistent() throws {
        let variables = try Self.runVariables()
        let configMap = try Self.kubernetes("ConfigMap")
        let settings = configMap["data"] as? [String: String] ?? [:]
        for key in settings.keys {
            let known = variables.contains(key)
            #expect(known, "ConfigMap sets \(key), which callpush run does not know")
        }

        let deployment = try Self.kubernetes("Deployment")
        let spec = ((deployment["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any] ?? [:]
        let drain = Double(settings["CALLPUSH_WORKER_DRAIN_TIMEOUT"] ?? "25") ?? 25
        let grace = spec["terminationGracePeriodSeconds"] as? Double ?? 30
        #expect(grace >= drain + 10, "terminationGracePeriodSeconds \(grace) < drain timeout \(drain) + 10")

        let container = (spec["containers"] as? [[String: Any]])?.first ?? [:]
        #expect((container["livenessProbe"] as? [String: Any]).flatMap { ($0["httpGet"] as? [String: Any])?["path"] as? String } == "/healthz")
        #expect((container["readinessProbe"] as? [String: Any]).flatMap { ($0["httpGet"] as? [String: Any])?["path"] as? String } == "/readyz")
        #expect((container["resources"] as? [String: Any])?["requests"] != nil)
        let envFrom = (container["envFrom"] as? [[String: Any]])?.first?["configMapRef"] as? [String: Any]
        #expect(envFrom?["name"] as? String == (configMap["metadata"] as? [String: Any])?["name"] as? String)
        let port = (container["ports"] as? [[String: Any]])?.first?["containerPort"] as? Int
        #expect(port.map(String.init) == settings["CALLPUSH_METRICS_PORT"])

        // The .p8 comes from the Secret, mounted as the file CALLPUSH_APNS_KEY_FILE names.
        let secret = try Self.kubernetes("Secret")
        let secretName = (secret["metadata"] as? [String: Any])?["name"] as? String
        let volume = (spec["volumes"] as? [[String: Any]] ?? []).first { ($0["secret"] as? [String: Any])?["secretName"] as? String == secretName }
        let mount = (container["volumeMounts"] as? [[String: Any]] ?? []).first { $0["name"] as? String == volume?["name"] as? String }
        let item = ((volume?["secret"] as? [String: Any])?["items"] as? [[String: Any]])?.first
        let mountedFile = "\(mount?["mountPath"] as? String ?? "?")/\(item?["path"] as? String ?? "?")"
        #expect(mountedFile == settings["CALLPUSH_APNS_KEY_FILE"])
        #expect((secret["stringData"] as? [String: Any])?[item?["key"] as? String ?? "?"] != nil)

        // PDB and Service select the Deployment's pods.
        let podLabels = ((deployment["spec"] as? [String: Any])?["template"] as? [String: Any]).flatMap { ($0["metadata"] as? [String: Any])?["labels"] as? [String: String] } ?? [:]
        let pdbSelector = ((try Self.kubernetes("PodDisruptionBudget")["spec"] as? [String: Any])?["selector"] as? [String: Any])?["matchLabels"] as? [String: String] ?? ["?": "?"]
        #expect(pdbSelector.allSatisfy { podLabels[$0.key] == $0.value })
        let serviceSelector = (try Self.kubernetes("Service")["spec"] as? [String: Any])?["selector"] as? [String: String] ?? ["?": "?"]
        #expect(serviceSelector.allSatisfy { podLabels[$0.key] == $0.value })

        // KEDA: the calls topic only, the group the workers use, bounded by the partition count.
        let scaled = try Self.kubernetes("ScaledObject")
        let scaledSpec = scaled["spec"] as? [String: Any] ?? [:]
        #expect((scaledSpec["scaleTargetRef"] as? [String: Any])?["name"] as? String == (deployment["metadata"] as? [String: Any])?["name"] as? String)
        let trigger = (scaledSpec["triggers"] as? [[String: Any]])?.first ?? [:]
        let metadata = trigger["metadata"] as? [String: String] ?? [:]
        #expect(trigger["type"] as? String == "kafka")
        #expect(metadata["topic"] == settings["CALLPUSH_KAFKA_CALLS_TOPIC"])
        #expect(metadata["consumerGroup"] == settings["CALLPUSH_KAFKA_GROUP"])
        #expect(metadata["bootstrapServers"] == settings["CALLPUSH_KAFKA_BROKERS"])
        #expect(metadata["excludePersistentLag"] == "true")
        let partitions = Int(((scaled["metadata"] as? [String: Any])?["annotations"] as? [String: String])?["callpush.dev/partitions"] ?? "") ?? 0
        let maxReplicas = scaledSpec["maxReplicaCount"] as? Int ?? Int.max
        let minReplicas = scaledSpec["minReplicaCount"] as? Int ?? 0
        #expect(minReplicas >= 1 && minReplicas <= maxReplicas && maxReplicas <= partitions)
        #expect(scaledSpec["cooldownPeriod"] != nil)
    }

    // MARK: - Prometheus

    @Test func promtoolAcceptsConfigRulesAndRuleTests() throws {
        let rules = try Self.run(["/usr/bin/promtool", "check", "rules", "Deploy/prometheus/alerts.yml"])
        #expect(rules.status == 0, "\(rules.stdout)\(rules.stderr)")
        let config = try Self.run(["/usr/bin/promtool", "check", "config", "Deploy/prometheus/prometheus.yml"])
        #expect(config.status == 0, "\(config.stdout)\(config.stderr)")
        let tests = try Self.run(["/usr/bin/promtool", "test", "rules", "Deploy/prometheus/alerts.test.yml",
                                  "Deploy/prometheus/alerts.expiry.test.yml"], timeout: 120)
        #expect(tests.status == 0, "\(tests.stdout)\(tests.stderr)")
        // The alerts the brief asks for exist.
        let alerts = Set(try Self.alertExpressions().keys)
        for alert in ["CallpushEndToEndLatencyP99AboveSLO", "CallpushDeadLetters", "CallpushAPNsRetryableErrorRatioHigh",
                      "CallpushAPNsCredentialFailures", "CallpushProduceFailures", "CallpushCallsLagGrowing",
                      "CallpushNoWorkersUp", "CallpushAPNsConnectionsDown"] {
            #expect(alerts.contains(alert), "missing alert \(alert)")
        }
    }

    // MARK: - Grafana

    @Test func dashboardIsProvisionableAndLaidOut() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.path("Grafana/dashboards/callpush.json")))
        let dashboard = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        #expect(dashboard["id"] is NSNull)
        #expect(dashboard["uid"] as? String == "callpush-overview")
        #expect((dashboard["schemaVersion"] as? Int).map { (36...42).contains($0) } == true)
        #expect(dashboard["__inputs"] == nil)

        let datasource = try Self.yamlObject("Grafana/provisioning/datasources/prometheus.yaml")
        let uids = Set((datasource["datasources"] as? [[String: Any]] ?? []).compactMap { $0["uid"] as? String })
        #expect(uids == ["prometheus"])
        let provider = (try Self.yamlObject("Grafana/provisioning/dashboards/callpush.yaml")["providers"] as? [[String: Any]])?.first
        #expect(provider?["type"] as? String == "file")
        // compose mounts Grafana/dashboards where the provider looks.
        let grafana = (try Self.yamlObject("Deploy/compose.yaml")["services"] as? [String: [String: Any]])?["grafana"]
        let path = (provider?["options"] as? [String: Any])?["path"] as? String ?? "?"
        #expect((grafana?["volumes"] as? [String])?.contains { $0.hasPrefix("../Grafana/dashboards:\(path)") } == true)

        // Panels: unique ids, on the 24-column grid, no overlaps, every datasource by uid.
        let panels = dashboard["panels"] as? [[String: Any]] ?? []
        #expect(Set(panels.compactMap { $0["id"] as? Int }).count == panels.count)
        var cells: Set<[Int]> = []
        for panel in panels {
            let grid = panel["gridPos"] as? [String: Int] ?? [:]
            let (x, y, w, h) = (grid["x"] ?? -1, grid["y"] ?? -1, grid["w"] ?? 0, grid["h"] ?? 0)
            #expect(x >= 0 && w > 0 && x + w <= 24 && h > 0, "\(panel["title"] ?? "?")")
            for column in x..<max(x + w, x) { for row in y..<max(y + h, y) { #expect(cells.insert([column, row]).inserted, "overlap at \(column),\(row)") } }
            var references: [[String: Any]] = []
            if let own = panel["datasource"] as? [String: Any] { references.append(own) }
            references += (panel["targets"] as? [[String: Any]] ?? []).compactMap { $0["datasource"] as? [String: Any] }
            if panel["type"] as? String != "row" { #expect(!references.isEmpty) }
            for reference in references { #expect(reference["uid"] as? String == "prometheus") }
        }
        // Sections in order.
        let rows = panels.filter { $0["type"] as? String == "row" }.compactMap { $0["title"] as? String }
        let order = ["SLO", "APNs", "APNs apps", "Kafka", "Outcomes", "Latency"]
        #expect(rows.count == order.count && zip(rows, order).allSatisfy { $0.hasPrefix($1) }, "\(rows)")
        // Both latency histograms have a heatmap.
        let heatmaps = panels.filter { $0["type"] as? String == "heatmap" }.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(heatmaps.contains { $0.contains("callpush_end_to_end_latency_seconds_bucket") })
        #expect(heatmaps.contains { $0.contains("callpush_apns_request_duration_seconds_bucket") })

        // The JSON is what the generator produces.
        let check = try Self.run([PythonInterpreter.path, "Grafana/generate-dashboard.py", "--check"])
        #expect(check.status == 0, "\(check.stderr)")
    }

    // MARK: - Metrics

    /// Metric families seen in real expositions: `callpush demo` with realistic faults while it runs, and
    /// `callpush run` (which alone registers `callpush_build_info`) with a token app and a certificate app pointed at an
    /// unreachable broker.
    static func exportedFamilies() throws -> (families: Set<String>, expositions: [String]) {
        var expositions: [String] = []

        let demoPort = FreePort.next()
        let demo = try ChildProcess(
            ["demo", "--duration", "6", "--rate", "50", "--faults", "realistic", "--metrics-port", String(demoPort)],
            executable: CallpushProcess.executable.path,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CALLPUSH_") },
            output: .discard, errors: .discard)
        let deadline = Date().addingTimeInterval(40)
        while demo.isRunning && Date() < deadline {
            let scrape = try run(["curl", "-sf", "--max-time", "2", "http://127.0.0.1:\(demoPort)/metrics"], timeout: 5)
            if scrape.status == 0 && !scrape.stdout.isEmpty { expositions.append(scrape.stdout) }
            usleep(700_000)  // scrapes spread over the demo's run, so its faults show
        }
        demo.terminate()
        #expect(!expositions.isEmpty, "no /metrics scrape of callpush demo succeeded")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-deploy-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A token app and a certificate app, so the per-credential series (certificate expiry included) show.
        let key = directory.appendingPathComponent("AuthKey.p8").path
        let certificate = directory.appendingPathComponent("enterprise.pem").path
        let certificateKey = directory.appendingPathComponent("enterprise-key.pem").path
        #expect(try run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]).status == 0)
        #expect(try run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
            "-subj", "/CN=Apple Push Services: com.example.enterprise", "-keyout", certificateKey, "-out", certificate,
        ]).status == 0)
        let config = directory.appendingPathComponent("config.json").path
        let apps = #"{"apns":{"apps":[{"bundle-id":"com.example.app","key-file":"\#(key)","key-id":"ABC123DEFG","team-id":"DEF123GHIJ"},"#
            + #"{"bundle-id":"com.example.enterprise","certificate":"\#(certificate)","private-key":"\#(certificateKey)"}]}}"#
        try apps.write(toFile: config, atomically: true, encoding: .utf8)
        let runPort = FreePort.next()
        let worker = try CallpushProcess([
            "run", "--kafka-brokers", "127.0.0.1:1", "--config", config, "--metrics-port", String(runPort), "--log-level", "critical",
        ], readFirstLine: false)
        // The metrics server answers before the APNs apps are loaded: wait for the apps' per-credential series.
        var runExposition = ""
        try Eventually.blockingWaitUntil(timeout: .seconds(30), interval: .milliseconds(200)) {
            let scrape = try run(["curl", "-sf", "--max-time", "2", "http://127.0.0.1:\(runPort)/metrics"], timeout: 5)
            if scrape.status == 0 { runExposition = scrape.stdout }
            return runExposition.contains("callpush_apns_certificate_expiry_timestamp_seconds{")
        }
        worker.terminate()
        #expect(!runExposition.isEmpty, "no /metrics scrape of callpush run succeeded")
        expositions.append(runExposition)

        var families: Set<String> = []
        for exposition in expositions {
            for line in exposition.split(separator: "\n") where line.hasPrefix("# TYPE ") {
                families.insert(String(line.split(separator: " ")[2]))
            }
        }
        return (families, expositions)
    }

    @Test func everyQueriedMetricIsDocumentedAndExported() throws {
        let documented = try Self.documentedMetrics()
        #expect(documented.count >= 20, "docs/operations.md Observability table: \(documented.count) metrics")
        let histograms = Set(documented.filter { $0.value == "histogram" }.keys)

        var queried: [String: Set<String>] = [:]  // family → where
        for expression in try Self.dashboardExpressions() {
            for series in Self.metricNames(in: expression) { queried[Self.family(series, histograms: histograms), default: []].insert("dashboard") }
        }
        for (alert, expression) in try Self.alertExpressions() {
            for series in Self.metricNames(in: expression) { queried[Self.family(series, histograms: histograms), default: []].insert(alert) }
        }
        #expect(queried.count >= 15)
        // Histogram series must be queried with a histogram suffix, never bare.
        for expression in try Self.dashboardExpressions() + Array(try Self.alertExpressions().values) {
            for series in Self.metricNames(in: expression) where histograms.contains(series) {
                Issue.record("\(series) is a histogram: query \(series)_bucket, _sum or _count")
            }
        }

        let (exported, expositions) = try Self.exportedFamilies()
        for (family, users) in queried.sorted(by: { $0.key < $1.key }) where family != "up" {
            #expect(documented[family] != nil, "\(family) (used by \(users.sorted())) is not in the docs/operations.md Observability table")
            #expect(exported.contains(family), "\(family) (used by \(users.sorted())) is not in any exposition")
        }
        // Every documented metric is exported (series are registered up front, so 0 shows, not nothing).
        let missing = Set(documented.keys).subtracting(exported)
        #expect(missing.isEmpty, "documented metrics not exported by demo/run: \(missing.sorted())")
        // Documented types match the exposition's TYPE lines.
        for exposition in expositions {
            for line in exposition.split(separator: "\n") where line.hasPrefix("# TYPE callpush_") || line.hasPrefix("# TYPE process_") {
                let parts = line.split(separator: " ")
                if let type = documented[String(parts[2])] { #expect(type == String(parts[3]), "\(line) vs docs/operations.md \(type)") }
            }
        }
        // Exported but undocumented families are printed for the record.
        let undocumented = exported.subtracting(documented.keys).sorted()
        if !undocumented.isEmpty { print("DeployAssetsTests: exported but not in the docs/operations.md table: \(undocumented)") }
    }

    // MARK: - Demo secrets

    /// compose's `secrets` service runs Deploy/scripts/generate-demo-secrets.sh; what it makes must work: the
    /// mock serves the generated certificate with --certificate/--private-key, verifies tokens signed with the
    /// generated .p8, and a client that trusts the certificate and checks the host name gets a 200.
    @Test func generatedDemoSecretsWorkWithTheMockAndTheClient() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-secrets-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let generated = try Self.run(["sh", "Deploy/scripts/generate-demo-secrets.sh", directory.path, "mock-apns"])
        #expect(generated.status == 0, "\(generated.stderr)")
        let certificate = directory.appendingPathComponent("mock-apns.crt").path
        let names = try Self.run(["openssl", "x509", "-in", certificate, "-noout", "-ext", "subjectAltName"])
        #expect(names.stdout.contains("DNS:mock-apns"))
        let key = directory.appendingPathComponent("AuthKey.p8").path
        let mock = try CallpushProcess([
            "mock-apns", "--certificate", certificate, "--private-key", directory.appendingPathComponent("mock-apns.key").path,
            "--key-file", key, "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ", "--bundle-id", "com.example.app",
        ])
        defer { mock.terminate() }
        let endpoint = String(mock.firstLine.split(separator: " ").first ?? "")
        #expect(mock.firstLine.hasSuffix("ca=\(certificate)"))
        let port = endpoint.split(separator: ":").last.map(String.init) ?? "0"
        let sent = try CallpushProcess.run([
            "send", "--token", String(repeating: "ab", count: 32), "--topic", "com.example.app", "--incoming",
            "--key-file", key, "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ",
            "--endpoint", "localhost:\(port)", "--ca-file", certificate,
        ], timeout: 30)
        #expect(sent.status == 0, "\(sent.stdout)\(sent.stderr)")
        #expect(sent.stdout.contains("status:         200"))
    }
}
