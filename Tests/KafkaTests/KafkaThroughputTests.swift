import Foundation
import Testing

import Kafka

/// Throughput measurement (no timing assertions). Run in release:
/// `CALLPUSH_MEASURE=1 swift test -c release -Xswiftc -enable-testing --filter KafkaThroughputTests`
@Suite(.enabled(if: ProcessInfo.processInfo.environment["CALLPUSH_MEASURE"] == "1"))
struct KafkaThroughputTests {
    @Test(.timeLimit(.minutes(3))) func measure() async throws {
        let messages = Int(ProcessInfo.processInfo.environment["CALLPUSH_MEASURE_MESSAGES"] ?? "") ?? 500_000
        let result = try await KafkaThroughputProbe.run(messages: messages, partitions: 8, valueSize: 200)
        print(
            "kafka throughput: \(result.messages) messages, produce \(Int(result.producedPerSecond)) msg/s, "
                + "consume \(Int(result.consumedPerSecond)) msg/s"
        )
    }
}
