import Foundation
import Telemetry
import Worker

/// The closing table of `callpush demo`.
struct DemoSummary {
    let outcomes: [Outcome: Int]
    let produced: Int
    let produceFailures: Int
    let latency: Histogram
    let elapsed: Duration
    let registry: MetricsRegistry

    /// Events produced that did not reach a final outcome.
    var lost: Int { max(0, produced - terminal) }
    var terminal: Int { outcomes.filter { $0.key != .retried }.values.reduce(0, +) }

    var table: String {
        let seconds = elapsed.inSeconds
        let consumed = outcomes.values.reduce(0, +)
        var rows: [(String, String)] = []
        for outcome in Outcome.allCases where outcome != .retried {
            rows.append((outcome.rawValue, String(outcomes[outcome] ?? 0)))
        }
        rows.append(("= final outcomes", String(terminal)))
        rows.append(("events produced", String(produced)))
        rows.append(("lost", String(lost)))
        rows.append(("retried (intermediate)", String(outcomes[.retried] ?? 0)))
        rows.append(("consumed (produced + retries)", String(consumed)))
        if produceFailures > 0 { rows.append(("generator produce failures", String(produceFailures))) }
        for (name, quantile) in [("latency p50", 0.5), ("latency p90", 0.9), ("latency p99", 0.99)] {
            // The estimate interpolates inside a bucket; it never exceeds what was actually observed.
            rows.append((name, latency.estimate(quantile: quantile).map { Self.milliseconds(min($0, latency.maximum)) } ?? "-"))
        }
        rows.append(("latency max", latency.count > 0 ? Self.milliseconds(latency.maximum) : "-"))
        rows.append(("pushes/s (delivered)", String(format: "%.0f", Double(outcomes[.delivered] ?? 0) / max(seconds, 0.001))))
        rows.append(("wall time", String(format: "%.1f s", seconds)))
        let width = rows.map(\.0.count).max() ?? 0
        var text = "\nSummary\n"
        for (name, value) in rows {
            text += "  \(name)\(String(repeating: " ", count: width - name.count))  \(value)\n"
        }
        text += lost == 0 ? "\nOK: every event produced ended in exactly one final outcome.\n"
            : "\nLOST: \(lost) events produced have no final outcome.\n"
        return text
    }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
}
