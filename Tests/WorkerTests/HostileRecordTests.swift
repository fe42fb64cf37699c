@testable import APNs
import Foundation
@testable import Kafka
import Synchronization
@testable import Telemetry
import TestSupport
import Testing

@testable import Worker

/// Records an upstream (or anything with write access to the calls topic) may send that must never stop a partition:
/// each ends in one counted outcome, the next event of the partition is still served, and the group's committed
/// offset moves past it (read back by a consumer of the same group after the worker has left).
@Suite(.serialized) struct HostileRecordTests {
    static let call = "c-hostile"

    static func event(_ id: String, call: String = call, type: String = "incoming", topic: String = "com.example.app",
                      caller: String = "Alice") -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return #"{"event_id":"\#(id)","type":"\#(type)","call_id":"\#(call)","device_token":"\#(String(repeating: "ab", count: 32))","push":"alert","topic":"\#(topic)","environment":"production","created_at":\#(now),"ring_timeout_s":600,"caller":{"name":"\#(caller)"}}"#
    }

    /// Produces `records` to `calls` (all keyed by ``call``, so one partition) with a producer that sends up to 2 MB.
    static func produce(_ harness: PipelineHarness, _ records: [(value: [UInt8], headers: [KafkaHeader])]) async throws {
        var configuration = KafkaProducerConfiguration()
        configuration.bootstrapServers = harness.cluster.bootstrapServers
        configuration.additionalProperties["message.max.bytes"] = "2000000"
        let producer = try KafkaProducer(configuration: configuration, logger: .disabled)
        for record in records {
            _ = try await producer.send(KafkaProducerRecord(
                topic: "calls", key: Array(call.utf8), value: record.value, headers: record.headers))
        }
        await producer.close()
    }

    /// The first `calls` offset a consumer of the worker's group reads after the worker left: where it committed.
    static func committedResumePoint(_ harness: PipelineHarness) async throws -> Int64? {
        try await produce(harness, [(Array(event("e-marker", caller: "Marker").utf8), [])])
        let collector = PipelineHarness.Collector()
        var configuration = PipelineHarness.consumerConfiguration(harness.cluster.bootstrapServers, group: harness.group)
        configuration.autoOffsetReset = .earliest
        let consumer = try KafkaConsumer(topics: ["calls"], configuration: configuration, delegate: collector, logger: .disabled)
        _ = await Eventually.waitUntil(timeout: .seconds(20)) { !collector.messages.isEmpty }
        await consumer.abandon()
        return collector.messages.map(\.offset).min()
    }

    /// The outcomes that happened (the zero series left out).
    static func outcomes(_ registry: MetricsRegistry) -> [Outcome: Int] { PipelineHarness.outcomes(registry).filter { $0.value > 0 } }

    static func counter(_ series: String, _ registry: MetricsRegistry) -> Double {
        ExpositionSeries.value(series, in: registry.exposition()) ?? 0
    }

    /// Hostile values, each with the outcome it must end in; all on one partition, then an ordinary event.
    static var hostileValues: [(name: String, value: [UInt8], deadLetter: String?)] {
        let valid = event("e-limit")
        // An unknown top-level key pads an event to exactly the decoder's limit (unknown keys are ignored).
        let limit = CallEventDecoder.Configuration().maximumEventSize
        func padded(to size: Int) -> [UInt8] {
            let head = String(valid.dropLast()) + #","padding":""#
            return Array((head + String(repeating: "p", count: size - head.utf8.count - 2) + #""}"#).utf8)
        }
        var nul = Array(event("e-nul").utf8)
        nul.insert(0, at: nul.firstIndex(of: UInt8(ascii: "A"))!)  // a raw NUL inside the caller's name
        var badUTF8 = Array(event("e-utf8").utf8)
        badUTF8.insert(contentsOf: [0xC3, 0x28], at: badUTF8.firstIndex(of: UInt8(ascii: "A"))!)
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        let wide = String(valid.dropLast()) + #","custom_wide":{"# + (0..<1500).map { "\"k\($0)\":1" }.joined(separator: ",") + "}}"
        return [
            ("at the size limit", padded(to: limit), nil),
            ("one byte over", padded(to: limit + 1), "event_too_large"),
            ("nested 40 deep", Array(valid.replacingOccurrences(of: #""caller":{"#, with: #""deep":\#(deep),"caller":{"#).utf8), "nesting_too_deep"),
            ("1500 keys wide", Array(wide.utf8), nil),
            ("raw NUL in a string", nul, "invalid_json"),
            ("invalid UTF-8", badUTF8, "invalid_json"),
            ("created_at 1e400", Array(valid.replacingOccurrences(of: #""ring_timeout_s":600"#, with: #""ring_timeout_s":600,"created_at":1e400"#).utf8), "invalid_json"),
            ("ring_timeout_s 2^70", Array(valid.replacingOccurrences(of: #""ring_timeout_s":600"#, with: #""ring_timeout_s":1180591620717411303424"#).utf8), "bad_ring_timeout"),
            ("duplicate type, last wins", Array(valid.replacingOccurrences(of: #""ring_timeout_s":600"#, with: #""ring_timeout_s":600,"type":"ringing""#).utf8), "unknown_type"),
            ("empty", [], "invalid_json"),
            ("an array", Array("[1,2,3]".utf8), "not_an_object"),
        ]
    }

    /// Each hostile value ends in its one outcome (a dead letter with the matching reason, or delivered), the event
    /// after them is delivered, and the group's committed offset moves past all of them.
    @Test func hostileValuesEachEndInTheirOutcomeAndThePartitionMovesOn() async throws {
        let harness = try PipelineHarness()
        let registry = MetricsRegistry()
        let worker = try harness.makeWorker(sender: ScriptedSender(), registry: registry)
        let cases = Self.hostileValues
        try await Self.produce(harness, cases.map { ($0.value, []) } + [(Array(Self.event("e-after").utf8), [])])
        let finished = await Eventually.waitUntil(timeout: .seconds(30)) {
            PipelineHarness.outcomes(registry).total >= cases.count + 1
        }
        #expect(finished, "\(PipelineHarness.outcomes(registry))")
        let letters = try await harness.read(["calls.dlq"], atLeast: cases.filter { $0.deadLetter != nil }.count)
        for (offset, testCase) in cases.enumerated() {
            let letter = letters.first { $0.headers.last { $0.name == "x-original-offset" }?.value == Array(String(offset).utf8) }
            let reason = letter.flatMap { $0.headers.last { $0.name == "x-dlq-reason" } }.map { String(decoding: $0.value, as: UTF8.self) }
            #expect(reason == testCase.deadLetter, "\(testCase.name)")
        }
        #expect(Self.outcomes(registry) == [.delivered: cases.filter { $0.deadLetter == nil }.count + 1,
                                            .deadLettered: cases.filter { $0.deadLetter != nil }.count])
        await worker.shutdown()
        #expect(try await Self.committedResumePoint(harness) == Int64(cases.count + 1))
    }

    /// A 999 814-byte value (Kafka takes up to 1 MiB from kafka-python and the Java client) with 40 headers of 1 KiB:
    /// its dead letter is cut to what Kafka takes and says so, instead of being refused and produced again forever.
    @Test func aValueNearAMebibyteIsDeadLetteredCutToFit() async throws {
        let harness = try PipelineHarness()
        let registry = MetricsRegistry()
        let worker = try harness.makeWorker(sender: ScriptedSender(), registry: registry)
        let huge = Array(repeating: UInt8(ascii: "x"), count: 999_814)
        let headers = (0..<40).map { KafkaHeader(name: "trace-\($0)", value: Array(repeating: UInt8(ascii: "t"), count: 1024)) }
        try await Self.produce(harness, [(huge, headers), (Array(Self.event("e-next").utf8), [])])
        let finished = await Eventually.waitUntil(timeout: .seconds(30)) {
            PipelineHarness.outcomes(registry).total >= 2
        }
        #expect(finished, "\(PipelineHarness.outcomes(registry))")
        #expect(Self.outcomes(registry) == [.deadLettered: 1, .delivered: 1])
        let letters = try await harness.read(["calls.dlq"], atLeast: 1)
        let letter = try #require(letters.first)
        #expect(letter.value.count == RoutingConfiguration().deadLetterValueLimit)
        #expect(letter.value == Array(huge.prefix(letter.value.count)))
        func header(_ name: String) -> String? { letter.headers.last { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) } }
        #expect(header("x-dlq-reason") == "event_too_large")
        #expect(header("x-dlq-value-bytes") == "999814")
        #expect(header("x-headers-dropped") == "25", "16 KiB of the 40 KiB of headers are carried")
        #expect(letter.headers.filter { $0.name.hasPrefix("trace-") }.count == 15)
        await worker.shutdown()
        #expect(try await Self.committedResumePoint(harness) == 2, "the group committed past the poison and its follower")
    }

    /// A record Kafka refuses for good (here a retry record over the producer's `message.max.bytes`) ends its event as
    /// `abandoned`, counted by topic and error, instead of a produce retried every few seconds without end.
    @Test func aRecordKafkaRefusesAbandonsItsEventAndThePartitionMovesOn() async throws {
        let harness = try PipelineHarness()
        let registry = MetricsRegistry()
        let log = RecordingLogSink()
        // The long caller name makes the retry record larger than the worker's producer takes; the short one's fits.
        let sender = ScriptedSender { request in
            request.payload.count > 1200 ? .unavailable : .ok
        }
        let worker = try harness.makeWorker(sender: sender, registry: registry, log: log) {
            $0.producer.additionalProperties["message.max.bytes"] = "1000"
        }
        try await Self.produce(harness, [
            (Array(Self.event("e-big", caller: String(repeating: "A", count: 1200)).utf8), []),
            (Array(Self.event("e-small", call: Self.call).utf8), []),
        ])
        let finished = await Eventually.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry).total >= 2 }
        #expect(finished, "\(PipelineHarness.outcomes(registry))")
        #expect(Self.outcomes(registry) == [.abandoned: 1, .delivered: 1])
        #expect(Self.counter(#"callpush_records_refused_total{topic="calls.retry.t0"}"#, registry) == 1,
                "\(registry.exposition().split(separator: "\n").filter { $0.hasPrefix("callpush_records_refused") })")
        #expect(Self.counter("callpush_produce_failures_total{topic=\"calls.retry.t0\"}", registry) == 0, "not retried")
        #expect(log.lines.contains { $0.contains("record refused by Kafka; its event is abandoned") && $0.contains("\"kafka.offset\":\"0\"") && $0.contains("MSG_SIZE_TOO_LARGE") })
        await worker.shutdown()
        #expect(try await Self.committedResumePoint(harness) == 2)
    }

    /// Headers only callpush writes, set by an upstream on the calls topic, are ignored: `x-attempt` past the budget,
    /// an `x-deadline` in the past and forged original coordinates neither dead-letter nor expire the call.
    @Test func headersOnlyCallpushWritesAreIgnoredOnTheCallsTopic() async throws {
        let harness = try PipelineHarness()
        let registry = MetricsRegistry()
        let attempts = Mutex(0)
        let sender = ScriptedSender { _ in
            attempts.withLock { $0 += 1; return $0 } == 1 ? .unavailable : .ok
        }
        let worker = try harness.makeWorker(sender: sender, registry: registry)
        let forged = [
            KafkaHeader(name: "x-attempt", value: Array("99".utf8)), KafkaHeader(name: "x-deadline", value: Array("1".utf8)),
            KafkaHeader(name: "x-original-offset", value: Array("12345".utf8)), KafkaHeader(name: "trace", value: Array("t-1".utf8)),
        ]
        try await Self.produce(harness, [(Array(Self.event("e-forged").utf8), forged)])
        let finished = await Eventually.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry)[.delivered] == 1 }
        #expect(finished, "\(PipelineHarness.outcomes(registry))")
        #expect(Self.outcomes(registry) == [.retried: 1, .delivered: 1], "retried once, then delivered")
        #expect(Self.counter("callpush_ignored_headers_total", registry) == 1)
        let retry = try #require(try await harness.read(["calls.retry.t0"], atLeast: 1).first)
        func header(_ name: String) -> String? { retry.headers.last { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) } }
        #expect(header("x-attempt") == "2")
        #expect(header("x-original-offset") == "0", "its own coordinates, not the forged ones")
        #expect(header("x-original-topic") == "calls")
        #expect(header("trace") == "t-1", "headers callpush does not manage are carried")
        #expect(header("x-deadline").flatMap(Int64.init).map { $0 > 1 } == true)
        await worker.shutdown()
    }

    /// A call is its app and its call id: another app's hang-up of the same call id does not cancel it.
    @Test func anotherAppsHangUpOfTheSameCallIDDoesNotCancelACall() async throws {
        let harness = try PipelineHarness()
        let registry = MetricsRegistry()
        let sender = ScriptedSender()
        let worker = try harness.makeWorker(sender: sender, registry: registry)
        try await Self.produce(harness, [
            (Array(Self.event("e-b-hangup", type: "hangup", topic: "com.other.app").utf8), []),
            (Array(Self.event("e-a-incoming", topic: "com.example.app").utf8), []),
            (Array(Self.event("e-b-incoming", topic: "com.other.app").utf8), []),
        ])
        let finished = await Eventually.waitUntil(timeout: .seconds(30)) { PipelineHarness.outcomes(registry).total >= 3 }
        #expect(finished)
        #expect(Self.outcomes(registry) == [.delivered: 2, .cancelled: 1])
        let incoming = sender.sent.filter { String(decoding: $0.request.payload, as: UTF8.self).contains(#""pushType":1"#) }
        #expect(incoming.map(\.request.topic) == ["com.example.app"], "app A's call rings; app B's ended call does not")
        await worker.shutdown()
    }
}
