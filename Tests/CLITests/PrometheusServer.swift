import Foundation
import TestSupport

/// Debian's `prometheus` server, started for a test with the shipped Deploy/prometheus config adapted only in its
/// targets and intervals, and queried through its HTTP API (with curl, as an operator would).
final class PrometheusServer {
    let process: ChildProcess
    let port: Int
    let directory: String

    /// Writes the adapted config next to a fresh TSDB directory and starts the server; returns once `/-/ready`
    /// answers. `targets` replace the shipped `callpush` job's targets; scrapes and rule evaluations run every second.
    init(directory: String, targets: [String]) throws {
        self.directory = directory
        port = FreePort.next()
        let shipped = try String(contentsOf: PackageRoot.url.appendingPathComponent("Deploy/prometheus/prometheus.yml"), encoding: .utf8)
        let config = try Self.adapt(shipped, targets: targets, ownAddress: "127.0.0.1:\(port)",
                                    rules: PackageRoot.url.appendingPathComponent("Deploy/prometheus/alerts.yml").path)
        try config.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: directory + "/tsdb", withIntermediateDirectories: true)
        process = try ChildProcess([
            "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/tsdb",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ], executable: "/usr/bin/prometheus")
        let ready = Eventually.blockingWaitUntil(timeout: .seconds(60), interval: .milliseconds(200)) {
            (try? ExternalTool.run(["curl", "-sf", "--max-time", "1", "http://127.0.0.1:\(port)/-/ready"]))?.status == 0
        }
        if ready { return }
        throw Failure("prometheus did not become ready: \(log)")
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The shipped config with the `callpush` job's targets, Prometheus' own address, the intervals (1 s) and the
    /// rule file's path replaced; throws when one of them is no longer where the shipped file had it.
    static func adapt(_ shipped: String, targets: [String], ownAddress: String, rules: String) throws -> String {
        var text = shipped
        func replace(_ old: String, _ new: String) throws {
            guard text.contains(old) else { throw Failure("Deploy/prometheus/prometheus.yml no longer contains \(old)") }
            text = text.replacingOccurrences(of: old, with: new)
        }
        try replace("scrape_interval: 15s", "scrape_interval: 1s")
        try replace("scrape_timeout: 10s", "scrape_timeout: 1s")
        try replace("evaluation_interval: 15s", "evaluation_interval: 1s")
        try replace("  - alerts.yml", "  - \(rules)")
        try replace("          - worker-1:9464\n          - worker-2:9464\n",
                    targets.map { "          - \($0)\n" }.joined())
        try replace("localhost:9090", ownAddress)
        return text
    }

    /// The log the server wrote.
    var log: String { process.log }

    /// GET `/api/v1/<path>` with URL-encoded parameters; the decoded `data` member, or a failure with the error.
    func api(_ path: String, _ parameters: [(String, String)]) throws -> Any {
        var arguments = ["curl", "-sG", "--max-time", "10", "http://127.0.0.1:\(port)/api/v1/\(path)"]
        for (name, value) in parameters { arguments += ["--data-urlencode", "\(name)=\(value)"] }
        let result = try ChildProcess.run(arguments, timeoutSeconds: 15)
        guard let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw Failure("\(path): not JSON: \(result.stdout.prefix(300)) \(result.stderr.prefix(300))")
        }
        guard object["status"] as? String == "success", let data = object["data"] else {
            throw Failure("\(path) \(parameters): \(object["errorType"] ?? "") \(object["error"] ?? "")")
        }
        return data
    }

    /// The series of a range query: each one's labels (values are not needed by the tests).
    func rangeSeries(_ query: String, start: Date, end: Date) throws -> [[String: String]] {
        let data = try api("query_range", [
            ("query", query), ("start", String(format: "%.3f", start.timeIntervalSince1970)),
            ("end", String(format: "%.3f", end.timeIntervalSince1970)), ("step", "1"),
        ])
        let result = (data as? [String: Any])?["result"] as? [[String: Any]] ?? []
        return result.map { $0["metric"] as? [String: String] ?? [:] }
    }

    /// An instant query's series count (the expression must be valid).
    func instantSeriesCount(_ query: String) throws -> Int {
        let data = try api("query", [("query", query)])
        return ((data as? [String: Any])?["result"] as? [Any])?.count ?? 0
    }

    /// The value of an instant query's only series; nil when it has none (or several).
    func instantValue(_ query: String) throws -> Double? {
        let data = try api("query", [("query", query)])
        guard let result = (data as? [String: Any])?["result"] as? [[String: Any]], result.count == 1,
              let value = result[0]["value"] as? [Any], value.count == 2, let text = value[1] as? String else { return nil }
        return Double(text)
    }

    /// Every loaded rule: name → (health, last error).
    func rules() throws -> [String: (health: String, lastError: String)] {
        let data = try api("rules", [])
        var rules: [String: (health: String, lastError: String)] = [:]
        for group in (data as? [String: Any])?["groups"] as? [[String: Any]] ?? [] {
            for rule in group["rules"] as? [[String: Any]] ?? [] {
                rules[rule["name"] as? String ?? "?"] = (rule["health"] as? String ?? "?", rule["lastError"] as? String ?? "")
            }
        }
        return rules
    }

    /// The values a label takes on the series that match `match`.
    func labelValues(_ label: String, match: String) throws -> [String] {
        try api("label/\(label)/values", [("match[]", match)]) as? [String] ?? []
    }

    func terminate() {
        process.terminate()
    }

    deinit {
        terminate()
    }
}
