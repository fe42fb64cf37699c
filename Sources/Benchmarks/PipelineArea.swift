import BenchSupport
import EmbeddedPipeline
import Foundation
import Kafka
import Telemetry
import Worker

/// Area `pipeline`: events/s through the whole ``EmbeddedPipeline`` (mock Kafka → worker → APNsClient → mock
/// APNs over TLS, no APNs faults). One worker joins the group; then a fixed burst of events is produced as fast
/// as Kafka takes it, and the clock runs until every event has a final outcome. Reference: the slower of the raw
/// Kafka consume rate and the APNsClient rate over the pipeline's connection count, from the same run.
enum PipelineArea {
    static func events(_ options: BenchOptions) -> Int { options.quick ? 2_000 : 20_000 }

    /// Every call an incoming alert or VoIP push to a live production token: no hang-ups, dead tokens, malformed
    /// or expired events, so every event is one push.
    static var mix: CallTrafficMix {
        var mix = CallTrafficMix()
        mix.hangUpFraction = 0
        mix.deadTokenFraction = 0
        mix.malformedFraction = 0
        mix.expiredFraction = 0
        mix.sandboxFraction = 0
        return mix
    }

    /// The embedded pipeline as `callpush demo` runs it: its mock APNs server keeps counts, not requests (as the
    /// mock the APNsClient reference runs against).
    static var configuration: EmbeddedPipelineConfiguration {
        var configuration = EmbeddedPipelineConfiguration()
        configuration.mockRecorderCapacity = 0
        return configuration
    }

    static func run(_ options: BenchOptions, references: AreaResult) async -> AreaResult {
        var result = AreaResult()
        let configuration = Self.configuration
        var references = references
        if references.kafkaConsumePerSecond == nil || references.apnsClientPerSecond[configuration.apnsConnections] == nil {
            print("  measuring the references (Kafka consume, APNsClient over \(configuration.apnsConnections) connections)…")
            if references.kafkaConsumePerSecond == nil {
                do {
                    let probe = try await KafkaThroughputProbe.run(
                        messages: KafkaArea.messages(options), partitions: KafkaArea.partitions,
                        valueSize: KafkaArea.valueSize)
                    references.kafkaConsumePerSecond = probe.consumedPerSecond
                } catch {
                    print("  FAILED Kafka reference: \(error)")
                }
            }
            if references.apnsClientPerSecond[configuration.apnsConnections] == nil {
                result.merge(await APNsArea.run(options, connectionCounts: [configuration.apnsConnections]))
                references.merge(result)
            }
        }
        var runs: [PipelineRun] = []
        for _ in 0..<options.repetitions {
            do {
                let run = try await PipelineRun.measure(events: events(options), configuration: configuration, mix: mix)
                print("  \(run.summary)")
                runs.append(run)
            } catch {
                print("  FAILED: \(error)")
            }
        }
        // The run with the median rate (the upper middle one for an even count) gives latency and memory.
        let rates = runs.map(\.eventsPerSecond)
        guard let median = runs.sorted(by: { $0.eventsPerSecond < $1.eventsPerSecond }).dropFirst(runs.count / 2).first,
              let kafka = references.kafkaConsumePerSecond,
              let apns = references.apnsClientPerSecond[configuration.apnsConnections] else { return result }
        let bound = min(kafka, apns)
        print("  references: Kafka consume \(BenchFormat.rate(kafka)), APNsClient over "
            + "\(configuration.apnsConnections) connections \(BenchFormat.rate(apns))")
        result.report(BenchRatio(area: .pipeline, name: "events/s vs min(kafka consume, apns client)",
                                 value: Median.of(rates), reference: bound, target: nil))
        result.notes.append("pipeline: \(BenchFormat.rate(Median.of(rates))) events (median of \(runs.count)); in that "
            + "run end-to-end latency p50 \(median.p50.map(BenchFormat.milliseconds) ?? "-") p99 "
            + "\(median.p99.map(BenchFormat.milliseconds) ?? "-") max \(median.maximum.map(BenchFormat.milliseconds) ?? "-"), peak RSS "
            + "\(median.peakKilobytes.map(BenchFormat.megabytes) ?? "-") (RSS before it "
            + "\(median.baselineKilobytes.map(BenchFormat.megabytes) ?? "-")); longest stall over all runs "
            + BenchFormat.milliseconds(runs.map(\.longestStall).max() ?? 0))
        return result
    }
}
