import Foundation
import TestSupport
import Synchronization
@testable import Telemetry
import Testing

@testable import Kafka

/// Where `kcat` is installed, if it is.
let kcatPath: String? = ExternalTool.path("kcat")

/// Interoperability with an independent client: `kcat` (librdkafka's CLI) against the embedded mock cluster.
@Suite(.timeLimit(.minutes(2)), .enabled(if: kcatPath != nil))
struct KafkaInteropTests {
    /// Runs `kcat` under `timeout` with `input` on stdin; returns stdout.
    static func kcat(_ arguments: [String], input: String = "", seconds: Int = 20) throws -> (Int32, String) {
        let result = try ChildProcess.run([String(seconds), kcatPath!] + arguments, executable: "/usr/bin/timeout",
                                          input: input, timeoutSeconds: Double(seconds + 5))
        return (result.status, result.stdout)
    }

    @Test func kcatProducesOurConsumerReads() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls")
        try cluster.createTopic(topic, partitions: 2)
        let lines = (0..<10).map { "call-\($0):{\"n\":\($0)}" }.joined(separator: "\n") + "\n"
        let (status, _) = try Self.kcat(
            ["-b", cluster.bootstrapServers, "-P", "-t", topic, "-K", ":", "-H", "x-attempt=1"],
            input: lines
        )
        #expect(status == 0)

        let delegate = RecordingDelegate.completingImmediately()
        let consumer = try KafkaConsumer(
            topics: [topic],
            configuration: KafkaTestSupport.consumerConfiguration(cluster, group: KafkaTestSupport.uniqueName("g")),
            delegate: delegate,
            logger: KafkaTestSupport.logger
        )
        #expect(await Eventually.waitUntil(timeout: .seconds(15)) { delegate.receivedCount >= 10 })
        await consumer.close()
        let byKey = Dictionary(
            delegate.received.map { (String(decoding: $0.key ?? [], as: UTF8.self), $0) },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(byKey.count == 10)
        for index in 0..<10 {
            let message = try #require(byKey["call-\(index)"])
            #expect(String(decoding: message.value, as: UTF8.self) == "{\"n\":\(index)}")
            #expect(message.header("x-attempt") == Array("1".utf8))
        }
    }

    @Test func ourProducerKcatReads() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let topic = KafkaTestSupport.uniqueName("calls.retry.5s")
        try cluster.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(
            configuration: KafkaTestSupport.producerConfiguration(cluster),
            logger: KafkaTestSupport.logger
        )
        for index in 0..<3 {
            _ = try await producer.send(
                KafkaProducerRecord(
                    topic: topic,
                    key: Array("call-\(index)".utf8),
                    value: Array("payload-\(index)".utf8),
                    headers: [
                        KafkaHeader(name: "x-attempt", string: String(index + 2)),
                        KafkaHeader(name: "x-not-before", string: "1764489600123"),
                    ]
                )
            )
        }
        await producer.close()
        let (status, output) = try Self.kcat([
            "-b", cluster.bootstrapServers, "-C", "-t", topic, "-o", "beginning", "-e", "-f", "%k %s %h\\n",
        ])
        #expect(status == 0)
        let lines = output.split(separator: "\n").map(String.init)
        #expect(
            lines == (0..<3).map { "call-\($0) payload-\($0) x-attempt=\($0 + 2),x-not-before=1764489600123" },
            "\(output)"
        )
    }
}
