import EmbeddedPipeline
import Foundation
import Telemetry
import Worker

/// One measured run of the embedded pipeline.
struct PipelineRun: Sendable {
    var events: Int
    var seconds: Double
    /// Seconds until the generator had every event acknowledged by Kafka.
    var produceSeconds: Double
    var outcomes: [Outcome: Int]
    /// Latency quantiles estimated from the `callpush_end_to_end_latency_seconds` buckets (as Prometheus'
    /// `histogram_quantile` does), clamped to the largest latency observed: with buckets as coarse as 2…5 s an
    /// interpolated p99 can otherwise exceed the whole run.
    var p50: Double?
    var p99: Double?
    var maximum: Double?
    /// Longest time, once the first outcome was final, in which no further outcome became final while some were
    /// still missing: an intake stall shows here (e.g. a resumed partition fetched only when librdkafka's broker
    /// thread wakes on its own, up to 1 s later).
    var longestStall: Double
    /// VmHWM after the run (reset just before it where the kernel allows).
    var peakKilobytes: Int?
    /// RSS just before the pipeline started (memory earlier areas left behind).
    var baselineKilobytes: Int?
    var peakWasReset: Bool

    var eventsPerSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }

    var summary: String {
        let counts = outcomes.filter { $0.value > 0 }.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(events) events in \(BenchFormat.seconds(seconds)) = \(BenchFormat.rate(eventsPerSecond)) "
            + "(\(counts); all produced after \(BenchFormat.seconds(produceSeconds))); end-to-end latency p50 \(p50.map(BenchFormat.milliseconds) ?? "-") "
            + "p99 \(p99.map(BenchFormat.milliseconds) ?? "-") max \(maximum.map(BenchFormat.milliseconds) ?? "-"); "
            + "longest stall \(BenchFormat.milliseconds(longestStall)); peak RSS "
            + "\(peakKilobytes.map(BenchFormat.megabytes) ?? "-")\(peakWasReset ? "" : " (whole process)")"
            + (baselineKilobytes.map { " (RSS before the run \(BenchFormat.megabytes($0)))" } ?? "")
    }

    static func measure(events: Int, configuration: EmbeddedPipelineConfiguration, mix: CallTrafficMix) async throws
        -> PipelineRun
    {
        let peakWasReset = PeakMemory.reset()
        let baseline = PeakMemory.currentKilobytes()
        let pipeline = try EmbeddedPipeline(configuration: configuration, registry: MetricsRegistry())
        let readiness = ReadinessFlag()
        do {
            try pipeline.startWorker(readiness: readiness)
        } catch {
            await pipeline.shutdown()
            throw error
        }
        let joinDeadline = ContinuousClock.now + .seconds(30)
        while !readiness.isReady, ContinuousClock.now < joinDeadline { try? await Task.sleep(for: .milliseconds(20)) }
        let generator = CallTrafficGenerator(
            producer: try pipeline.makeProducer(), topic: pipeline.workerConfiguration.callsTopic,
            bundleID: configuration.bundleID, mix: mix)
        let start = ContinuousClock.now
        let produced = await generator.run(rate: 10_000_000, count: events, duration: .seconds(120))
        let produceElapsed = ContinuousClock.now - start
        let deadline = ContinuousClock.now + .seconds(120)
        var final = 0
        var lastProgress: ContinuousClock.Instant?
        var longestStall = Duration.zero
        while ContinuousClock.now < deadline {
            let now = ContinuousClock.now
            let count = pipeline.outcomes.filter { $0.key != .retried }.values.reduce(0, +)
            if count > final {
                if let lastProgress { longestStall = max(longestStall, now - lastProgress) }
                lastProgress = now
                final = count
            }
            if final >= produced { break }
            try? await Task.sleep(for: .milliseconds(2))
        }
        let elapsed = ContinuousClock.now - start
        let run = PipelineRun(
            events: final,
            seconds: elapsed.inSeconds,
            produceSeconds: produceElapsed.inSeconds,
            outcomes: pipeline.outcomes,
            p50: pipeline.latency.estimate(quantile: 0.5).map { min($0, pipeline.latency.maximum) },
            p99: pipeline.latency.estimate(quantile: 0.99).map { min($0, pipeline.latency.maximum) },
            maximum: pipeline.latency.count > 0 ? pipeline.latency.maximum : nil,
            longestStall: longestStall.inSeconds,
            peakKilobytes: PeakMemory.kilobytes(), baselineKilobytes: baseline, peakWasReset: peakWasReset)
        await pipeline.shutdown()
        if final < produced { throw BenchFailure("only \(final) of \(produced) events reached a final outcome") }
        return run
    }
}
