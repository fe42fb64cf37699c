import EmbeddedPipeline
import Telemetry
import Worker

/// The live progress line of `callpush demo`.
struct DemoProgress {
    let pipeline: EmbeddedPipeline
    let registry: MetricsRegistry

    /// Outcomes that end an event for good (everything but `retried`).
    var terminalOutcomes: Int {
        pipeline.outcomes.filter { $0.key != .retried }.values.reduce(0, +)
    }

    func line(elapsed: Duration, produced: Int) -> String {
        let outcomes = pipeline.outcomes
        let inFlight = Int(WorkerMetrics(registry: registry).inFlight.value)
        let seconds = max(1, Double(elapsed.components.seconds))
        let delivered = outcomes[.delivered] ?? 0
        let p99 = pipeline.latency.estimate(quantile: 0.99).map { String(format: "%.0f ms", $0 * 1000) } ?? "-"
        return "t=\(Int(seconds))s produced \(produced) in-flight \(inFlight) delivered \(delivered) "
            + "invalidated \(outcomes[.invalidated] ?? 0) retried \(outcomes[.retried] ?? 0) "
            + "dlq \(outcomes[.deadLettered] ?? 0) expired \(outcomes[.expired] ?? 0) "
            + "cancelled \(outcomes[.cancelled] ?? 0) p99 \(p99) \(Int(Double(delivered) / seconds))/s"
    }
}
