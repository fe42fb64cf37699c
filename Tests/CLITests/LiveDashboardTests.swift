import Foundation
import TestSupport
import Testing
@preconcurrency import Glibc

/// The Grafana dashboard and the alert rules, proven on a real Prometheus: Debian's `prometheus` scrapes a real
/// `callpush run` (two token apps and a certificate app, one of whose keys the mock does not know) against
/// `callpush kafka-mock` and a faulty `callpush mock-apns`, through the shipped Deploy/prometheus config and alert
/// rules; then every panel query must return series over the run, carrying every label its legend names, and every
/// alert rule must evaluate without error.
@Suite(.serialized) struct LiveDashboardTests {
    /// Panel queries that may return nothing in this run, each with the reason. Keep it short.
    static let mayBeEmpty: [String: String] = [:]

    struct PanelQuery {
        let panel: String
        let legend: String
        let expression: String
    }

    /// Every panel target of the dashboard, with Grafana's variables replaced by what this run's Prometheus has:
    /// `$job` is the shipped job, `$instance` every worker (the variable's "All"), and both intervals 5 s (at least
    /// four 1-second scrapes, as Grafana's `$__rate_interval` would be).
    static func panelQueries() throws -> [PanelQuery] {
        let data = try Data(contentsOf: PackageRoot.url.appendingPathComponent("Grafana/dashboards/callpush.json"))
        let dashboard = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        var queries: [PanelQuery] = []
        for panel in dashboard["panels"] as? [[String: Any]] ?? [] {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                guard let expression = target["expr"] as? String else { continue }
                let concrete = expression
                    .replacingOccurrences(of: "$__rate_interval", with: "5s")
                    .replacingOccurrences(of: "$__interval", with: "5s")
                    .replacingOccurrences(of: "$job", with: "callpush")
                    .replacingOccurrences(of: "$instance", with: ".*")
                queries.append(PanelQuery(panel: panel["title"] as? String ?? "?", legend: target["legendFormat"] as? String ?? "",
                                          expression: concrete))
            }
        }
        return queries
    }

    /// The labels a legend format names (`{{status}} {{reason}}` → status, reason).
    static func legendLabels(_ legend: String) -> [String] {
        DeployAssetsTests.matches(of: #"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}"#, in: legend)
    }

    @Test func variablesAreReplacedAndLegendLabelsFound() throws {
        let queries = try Self.panelQueries()
        #expect(queries.count >= 60)
        for query in queries { #expect(!query.expression.contains("$"), "\(query.panel): \(query.expression)") }
        #expect(Self.legendLabels("{{topic}}[{{ partition }}] x") == ["topic", "partition"])
    }

    @Test(.timeLimit(.minutes(3))) func everyPanelAndAlertEvaluatesOnARealPrometheus() async throws {
        let bed = try LiveDashboardBed()
        defer { bed.stop() }
        try await bed.startWorker()
        let prometheus = try PrometheusServer(directory: bed.directory, targets: ["127.0.0.1:\(bed.metricsPort)"])
        defer { prometheus.terminate() }
        let start = Date()
        try await bed.runTraffic(seconds: 16)
        // The last scrapes after the traffic's outcomes: every event's outcome is final, and Prometheus has their count.
        var outcomes = (worker: -1.0, prometheus: Double?.none)
        let scraped = await Eventually.waitUntil(timeout: .seconds(60), interval: .milliseconds(500)) {
            let live = (try? ExternalTool.run(["curl", "-s", "--max-time", "2", "localhost:\(bed.metricsPort)/metrics"]))?.output ?? ""
            guard ExpositionSeries.value("callpush_inflight_events", in: live) == 0 else { return false }
            outcomes.worker = ExpositionSeries.sum("callpush_outcomes_total", in: live)
            outcomes.prometheus = try? prometheus.instantValue(#"sum(callpush_outcomes_total{job="callpush"})"#)
            return outcomes.prometheus == outcomes.worker
        }
        #expect(scraped, "outcomes: worker \(outcomes.worker), Prometheus \(String(describing: outcomes.prometheus))\nworker: \(bed.logTail)")
        let end = Date()

        var empty: [String] = []
        for query in try Self.panelQueries() {
            let series = try prometheus.rangeSeries(query.expression, start: start, end: end)
            let name = "\(query.panel) [\(query.legend)]"
            if series.isEmpty {
                if Self.mayBeEmpty[query.panel] == nil { empty.append("\(name): \(query.expression)") }
                continue
            }
            for label in Self.legendLabels(query.legend) {
                let lacking = series.filter { $0[label] == nil }
                #expect(lacking.isEmpty, "\(name): legend names \(label), which \(lacking.count) of \(series.count) series lack: \(lacking.prefix(2))")
            }
        }
        #expect(empty.isEmpty, "panel queries without series:\n\(empty.joined(separator: "\n"))\nworker: \(bed.logTail)")

        // The template variables find this run's job and worker.
        #expect(try prometheus.labelValues("job", match: "callpush_outcomes_total").contains("callpush"))
        #expect(try prometheus.labelValues("instance", match: #"callpush_outcomes_total{job="callpush"}"#)
            .contains("127.0.0.1:\(bed.metricsPort)"))

        // Every alert rule: valid, evaluated by Prometheus itself without error, and as an instant query.
        let alerts = try DeployAssetsTests.alertExpressions()
        let loaded = try prometheus.rules()
        #expect(Set(loaded.keys) == Set(alerts.keys), "rules Prometheus loaded: \(loaded.keys.sorted())")
        for (name, rule) in loaded.sorted(by: { $0.key < $1.key }) {
            #expect(rule.health == "ok", "\(name): \(rule.health) \(rule.lastError)")
        }
        for (name, expression) in alerts.sorted(by: { $0.key < $1.key }) {
            #expect(throws: Never.self, "\(name)") { _ = try prometheus.instantSeriesCount(expression) }
        }
        // The traffic's faults show: the worker is up, and the credential alert's condition holds.
        #expect(try prometheus.instantSeriesCount(#"up{job="callpush"} == 1"#) == 1)
        #expect(try prometheus.instantSeriesCount(alerts["CallpushAPNsCredentialFailures"] ?? "") >= 1)
    }
}
