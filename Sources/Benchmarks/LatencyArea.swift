import EmbeddedPipeline
import Kafka
import Telemetry
import Worker

/// Area `latency`: the worker's own time per event (`callpush_worker_processing_seconds`) and end-to-end latency
/// (`created_at` → APNs answer) under a steady load. An ``EmbeddedPipeline`` (one worker, receipts on, no APNs
/// faults) first takes bursts to measure its maximum rate; then calls are produced at 10, 25, 50 and 75 % of that
/// maximum, each rate in windows of their own, on a fresh pipeline each, whose events are all followed to their
/// outcome.
///
/// The area runs in a `callpush-bench` process of its own with `callpush run`'s malloc arena limit
/// (``OwnProcessArea``): it measures the worker's latency, and 2 arenas made its tail several times longer
/// (docs/performance.md, "Memory allocator").
enum LatencyArea {
    static let fractions = [0.10, 0.25, 0.50, 0.75]
    /// The target bound on the worker's own p99 at half the maximum rate.
    static let workerP99Bound = 0.005

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        let configuration = PipelineArea.configuration
        do {
            let maximum: Double
            if let given = options.latencyMaximumRate {
                maximum = given
                print("  maximum: \(BenchFormat.rate(maximum)) (given by --latency-max-rate)")
            } else {
                maximum = try await withPipeline(configuration) { pipeline, producer in
                    try await maximumRate(pipeline, producer: producer, options: options)
                }
                print("  maximum: \(BenchFormat.rate(maximum)) (median of \(options.repetitions) bursts of "
                    + "\(PipelineArea.events(options)) events)")
            }
            let window = Duration.seconds(max(2, options.seconds * 2))
            for fraction in fractions {
                var windows: [LatencyWindow] = []
                for _ in 0..<options.repetitions {
                    // A fresh cluster for every window: librdkafka's mock broker finds a fetch offset by walking the
                    // partition's whole list of message sets, so its cost per fetch grows with what earlier windows left.
                    let measured = try await withPipeline(configuration) { pipeline, producer in
                        _ = try await LatencyWindow.measure(pipeline, producer: producer, rate: maximum * fraction,
                                                            duration: .milliseconds(500), mix: PipelineArea.mix)
                        return try await LatencyWindow.measure(pipeline, producer: producer, rate: maximum * fraction,
                                                               duration: window, mix: PipelineArea.mix)
                    }
                    print("  \(Int(fraction * 100)) %: \(measured.summary)")
                    windows.append(measured)
                }
                let worker99 = Median.of(windows.compactMap(\.worker.p99))
                result.notes.append("latency at \(Int(fraction * 100)) % of \(BenchFormat.rate(maximum)): worker p50 "
                    + "\(BenchFormat.milliseconds(Median.of(windows.compactMap(\.worker.p50)))) p99 "
                    + "\(BenchFormat.milliseconds(worker99)), end to end p50 "
                    + "\(BenchFormat.milliseconds(Median.of(windows.compactMap(\.endToEnd.p50)))) p99 "
                    + "\(BenchFormat.milliseconds(Median.of(windows.compactMap(\.endToEnd.p99)))) (medians of \(windows.count))")
                if fraction == 0.5 {
                    result.report(BenchRatio(area: .latency, name: "worker p99 at 50 % of max vs 5 ms",
                                             value: worker99, reference: workerP99Bound, target: .atMost(1)))
                }
            }
            print(result.notes.map { "  " + $0 }.joined(separator: "\n"))
        } catch {
            print("  FAILED: \(error)")
        }
        return result
    }

    /// Runs `body` with a fresh pipeline whose one worker has joined, and a producer on its cluster.
    private static func withPipeline<T>(
        _ configuration: EmbeddedPipelineConfiguration,
        _ body: (EmbeddedPipeline, KafkaProducer) async throws -> T
    ) async throws -> T {
        let pipeline = try EmbeddedPipeline(configuration: configuration, registry: MetricsRegistry())
        let producer: KafkaProducer
        do {
            let readiness = ReadinessFlag()
            try pipeline.startWorker(readiness: readiness)
            producer = try pipeline.makeProducer()
            let joinDeadline = ContinuousClock.now + .seconds(30)
            while !readiness.isReady, ContinuousClock.now < joinDeadline { try? await Task.sleep(for: .milliseconds(20)) }
        } catch {
            await pipeline.shutdown()
            throw error
        }
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body(pipeline, producer)) } catch { outcome = .failure(error) }
        await producer.close()
        await pipeline.shutdown()
        return try outcome.get()
    }

    /// Events/s of bursts produced as fast as Kafka takes them, timed until every outcome is final; the median.
    private static func maximumRate(_ pipeline: EmbeddedPipeline, producer: KafkaProducer, options: BenchOptions)
        async throws -> Double
    {
        var rates: [Double] = []
        for _ in 0..<options.repetitions {
            let finalBefore = LatencyWindow.finalOutcomes(pipeline)
            let generator = CallTrafficGenerator(
                producer: producer, topic: pipeline.workerConfiguration.callsTopic,
                bundleID: pipeline.configuration.bundleID, mix: PipelineArea.mix)
            let start = ContinuousClock.now
            let produced = await generator.run(rate: 10_000_000, count: PipelineArea.events(options), duration: .seconds(120))
            try await LatencyWindow.awaitOutcomes(pipeline, count: finalBefore + produced, timeout: .seconds(120))
            rates.append(Double(produced) / (ContinuousClock.now - start).inSeconds)
        }
        return Median.of(rates)
    }
}
