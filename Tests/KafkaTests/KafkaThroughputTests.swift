import BenchSupport
import Foundation
import Testing

@testable import Kafka

/// Throughput measurement (no timing assertions). Run in release:
/// `CALLPUSH_MEASURE=1 swift test -c release -Xswiftc -enable-testing --filter KafkaThroughputTests`
@Suite(.enabled(if: ProcessInfo.processInfo.environment["CALLPUSH_MEASURE"] == "1"))
struct KafkaThroughputTests {
    @Test(.timeLimit(.minutes(3))) func measure() async throws {
        let messages = Int(ProcessInfo.processInfo.environment["CALLPUSH_MEASURE_MESSAGES"] ?? "") ?? 200_000
        // CALLPUSH_MEASURE_PROPS="key=value,key=value" passes extra librdkafka consumer properties.
        var properties: [String: String] = [:]
        for pair in (ProcessInfo.processInfo.environment["CALLPUSH_MEASURE_PROPS"] ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { properties[String(parts[0])] = String(parts[1]) }
        }
        let result = try await KafkaThroughputProbe.run(
            messages: messages,
            partitions: 16,
            valueSize: 200,
            consumerProperties: properties
        )
        print(
            "kafka throughput: \(result.messages) messages, produce \(Int(result.producedPerSecond)) msg/s, "
                + "consume \(Int(result.consumedPerSecond)) msg/s, failed deliveries \(result.failedDeliveries), "
                + "consumed \(result.consumed)"
        )
    }
}
