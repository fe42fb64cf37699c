@testable import APNs
import EmbeddedPipeline
import Foundation
import Kafka
import Testing
@testable import Worker

/// The bench's and the demo's traffic, read back from Kafka: what the generator writes byte by byte must be the
/// events the worker decodes, with ids that never repeat across runs on one cluster.
@Suite struct CallTrafficGeneratorTests {
    @Test func eventsDecodeAndIDsNeverRepeatAcrossRuns() async throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        try cluster.createTopic("calls", partitions: 2)
        var producerConfiguration = KafkaProducerConfiguration()
        producerConfiguration.bootstrapServers = cluster.bootstrapServers
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: .disabled)
        var mix = CallTrafficMix()
        mix.hangUpFraction = 0
        var produced = 0
        // Two runs with the same seed (the same mix), as the latency area's warm-up and measured window. Bounded by the
        // count: a duration would end a run early whenever the whole suite keeps Swift's concurrency pool busy.
        for _ in 0..<2 {
            let generator = CallTrafficGenerator(producer: producer, bundleID: "com.example.app", mix: mix)
            produced += await generator.run(rate: 1_000_000, count: 2_000, duration: .seconds(600))
        }
        await producer.close()
        #expect(produced == 4_000)
        let records = try await PipelineHarness.read(bootstrap: cluster.bootstrapServers, ["calls"], atLeast: produced,
                                                     timeout: .seconds(120))
        #expect(records.count == produced)

        let decoder = CallEventDecoder()
        var events: [CallEvent] = []
        var malformed = 0
        for record in records {
            do {
                let event = try decoder.decode(record.value)
                #expect(record.key == Array(event.callID.utf8), "keyed by call id")
                events.append(event)
            } catch {
                malformed += 1
                #expect(error.code == .invalidJSON, "only the mix's truncated events fail: \(error.code)")
            }
        }
        #expect(Set(events.map(\.callID)).count == events.count, "no call id repeats, across the two runs too")
        #expect(Set(events.map(\.eventID)).count == events.count)
        #expect(events.allSatisfy { $0.eventID.utf8.count == 36 && $0.eventID == $0.eventID.lowercased()
                && UUID(uuidString: $0.eventID) != nil && Array($0.eventID.utf8)[14] == UInt8(ascii: "4") })
        #expect(events.allSatisfy { $0.type == .incoming && $0.topic == "com.example.app" && $0.ringTimeoutSeconds == 30 })
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let expired = events.filter { now - $0.createdAtMilliseconds > 60_000 }
        let dead = events.filter { CallTrafficGenerator.deadTokens.contains($0.deviceToken.hex) }
        let live = events.filter { !CallTrafficGenerator.deadTokens.contains($0.deviceToken.hex) }
        #expect(live.allSatisfy { $0.deviceToken.hex.hasPrefix(String(repeating: "0", count: 56)) })
        #expect(events.allSatisfy { $0.caller.name?.hasPrefix("Caller ") == true && $0.caller.id?.hasPrefix("u-") == true })
        // The default mix: 1 % malformed, 2 % expired, 3 % dead tokens, 10 % VoIP, 20 % sandbox (±, 4000 events).
        #expect((10...90).contains(malformed), "malformed \(malformed)")
        #expect((30...150).contains(expired.count), "expired \(expired.count)")
        #expect((50...200).contains(dead.count), "dead tokens \(dead.count)")
        #expect((250...550).contains(events.filter { $0.push == .voip }.count))
        #expect((600...1000).contains(events.filter { $0.environment == .sandbox }.count))
    }
}
