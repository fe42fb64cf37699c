import APNs
import EmbeddedPipeline
import Foundation
import Kafka
import Telemetry
import Worker

/// One steady-rate window through an ``EmbeddedPipeline``: calls produced at `rate` for a while, then every one of
/// them followed to its final outcome; the quantiles come from the observations the window added to the worker's
/// histograms (`callpush_worker_processing_seconds`, `callpush_end_to_end_latency_seconds`), nothing before it.
struct LatencyWindow: Sendable {
    var targetRate: Double
    var events: Int
    /// Events produced per second over the window.
    var achievedRate: Double
    var worker: Quantiles
    var endToEnd: Quantiles
    /// `callpush_worker_stage_seconds{stage="dispatch"}`: hand-over → push handed to the APNs client.
    var dispatch: Quantiles
    /// `callpush_apns_request_duration_seconds`: the APNs leg of the worker's time.
    var apns: Quantiles
    /// `callpush_worker_stage_seconds{stage="acknowledge"}`: the outcome's records produced → acknowledged.
    var acknowledge: Quantiles
    /// Partitions the consumer paused during the window (back-pressure): each costs a refetch.
    var pauses: Int

    struct Quantiles: Sendable {
        var p50: Double?
        var p99: Double?

        /// The quantiles of what `histogram` observed since `before` (its cumulative counts then).
        init(_ histogram: Histogram, since before: [UInt64]) {
            let counts = zip(histogram.cumulativeCounts, before).map { $0 &- $1 }
            p50 = Histogram.estimate(quantile: 0.5, cumulativeCounts: counts, upperBounds: histogram.upperBounds)
            p99 = Histogram.estimate(quantile: 0.99, cumulativeCounts: counts, upperBounds: histogram.upperBounds)
        }

        var text: String {
            "p50 \(p50.map(BenchFormat.milliseconds) ?? "-") p99 \(p99.map(BenchFormat.milliseconds) ?? "-")"
        }
    }

    var summary: String {
        "\(BenchFormat.rate(targetRate)) target, \(BenchFormat.rate(achievedRate)) produced, \(events) events: worker "
            + "\(worker.text) (dispatch \(dispatch.text), APNs leg \(apns.text), acknowledge \(acknowledge.text)), end to end "
            + "\(endToEnd.text), \(pauses) pauses"
    }

    /// Events with a final outcome so far (no faults: nothing is retried).
    static func finalOutcomes(_ pipeline: EmbeddedPipeline) -> Int {
        pipeline.outcomes.filter { $0.key != .retried }.values.reduce(0, +)
    }

    /// `callpush_kafka_partition_pauses_total` summed over its reasons.
    static func pauses(_ pipeline: EmbeddedPipeline) -> Int {
        pipeline.registry.exposition().split(separator: "\n")
            .filter { $0.hasPrefix("callpush_kafka_partition_pauses_total{") }
            .reduce(0) { $0 + Int($1.split(separator: " ").last.flatMap { Double($0) } ?? 0) }
    }

    /// Waits until `count` outcomes are final, or throws after `timeout`.
    static func awaitOutcomes(_ pipeline: EmbeddedPipeline, count: Int, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while finalOutcomes(pipeline) < count {
            guard ContinuousClock.now < deadline else {
                throw BenchFailure("only \(finalOutcomes(pipeline)) of \(count) events reached a final outcome")
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Produces calls at `rate` for `duration` with `producer` and waits for all their outcomes.
    static func measure(
        _ pipeline: EmbeddedPipeline, producer: KafkaProducer, rate: Double, duration: Duration, mix: CallTrafficMix
    ) async throws -> LatencyWindow {
        let metrics = WorkerMetrics(registry: pipeline.registry)
        let workerBefore = metrics.processing.cumulativeCounts
        let endToEndBefore = metrics.endToEndLatency.cumulativeCounts
        let apnsLeg = pipeline.registry.histogram(APNsClientMetrics.requestDuration, help: "")
        let apnsBefore = apnsLeg.cumulativeCounts
        let dispatchBefore = metrics.dispatchStage.cumulativeCounts
        let acknowledgeBefore = metrics.acknowledgeStage.cumulativeCounts
        let finalBefore = finalOutcomes(pipeline)
        let pausesBefore = pauses(pipeline)
        let generator = CallTrafficGenerator(
            producer: producer, topic: pipeline.workerConfiguration.callsTopic,
            bundleID: pipeline.configuration.bundleID, mix: mix)
        let start = ContinuousClock.now
        let produced = await generator.run(rate: rate, count: nil, duration: duration)
        let producing = ContinuousClock.now - start
        try await awaitOutcomes(pipeline, count: finalBefore + produced, timeout: .seconds(60))
        return LatencyWindow(
            targetRate: rate, events: produced, achievedRate: Double(produced) / producing.inSeconds,
            worker: Quantiles(metrics.processing, since: workerBefore),
            endToEnd: Quantiles(metrics.endToEndLatency, since: endToEndBefore),
            dispatch: Quantiles(metrics.dispatchStage, since: dispatchBefore),
            apns: Quantiles(apnsLeg, since: apnsBefore),
            acknowledge: Quantiles(metrics.acknowledgeStage, since: acknowledgeBefore),
            pauses: pauses(pipeline) - pausesBefore)
    }
}
