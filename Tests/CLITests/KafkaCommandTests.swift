import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct KafkaCommandTests {
    static let token = String(repeating: "ab", count: 32)

    static func event(_ id: String, call: String, type: String = "incoming") -> String {
        """
        {"event_id":"\(id)","type":"\(type)","call_id":"\(call)","device_token":"\(token)","push":"alert",\
        "topic":"com.example.app","environment":"sandbox","created_at":1764489600123}
        """
    }

    @Test func kafkaMockPrintsBootstrapAndServesKcatUntilSIGTERM() throws {
        let cluster = try CallpushProcess(["kafka-mock", "--partitions", "2"])
        #expect(cluster.firstLine.contains("127.0.0.1:"))
        let metadata = try ExternalTool.run(["kcat", "-b", cluster.firstLine, "-L"])
        #expect(metadata.status == 0)
        #expect(metadata.output.contains("topic \"calls\" with 2 partitions"))
        #expect(metadata.output.contains("topic \"apns.tokens.invalidated\""))
        #expect(cluster.terminate() == 0)
    }

    @Test func produceValidatesKeysAndCounts() throws {
        let cluster = try CallpushProcess(["kafka-mock", "--topics", "calls"])
        defer { cluster.terminate() }
        let input = [Self.event("e1", call: "c-1"), "{broken", "", Self.event("e2", call: "c-2", type: "hangup")]
            .joined(separator: "\n")
        let result = try CallpushProcess.run(["produce", "--brokers", cluster.firstLine], input: input)
        #expect(result.status == 1)
        #expect(result.stdout.hasSuffix("produced 2, failed 1\n"))
        #expect(result.stderr.contains("callpush: line 2: invalid_json"))
        let read = try ExternalTool.run(["kcat", "-b", cluster.firstLine, "-C", "-t", "calls", "-e", "-q", "-f", "%k|%s\n"])
        let lines = read.output.split(separator: "\n").map(String.init).sorted()
        #expect(lines == ["c-1|" + Self.event("e1", call: "c-1"), "c-2|" + Self.event("e2", call: "c-2", type: "hangup")])
    }

    @Test func produceFromFileSucceedsWithExitZero() throws {
        let cluster = try CallpushProcess(["kafka-mock", "--topics", "calls"])
        defer { cluster.terminate() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID()).jsonl")
        try (0..<50).map { Self.event("e\($0)", call: "c-\($0)") }.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try CallpushProcess.run(["produce", "--brokers", cluster.firstLine, "--file", file.path])
        #expect(result.status == 0)
        #expect(result.stdout.hasSuffix("produced 50, failed 0\n"))
    }

    @Test func replayFromTheDeadLetterTopic() throws {
        let cluster = try CallpushProcess(["kafka-mock", "--topics", "calls,calls.dlq"])
        defer { cluster.terminate() }
        let dead = Self.event("e-dead", call: "c-9")
        let seeded = try ExternalTool.run(["kcat", "-b", cluster.firstLine, "-P", "-t", "calls.dlq", "-K", "|"],
                                  input: "c-9|\(dead)\nc-x|garbage\n")
        #expect(seeded.status == 0)
        let result = try CallpushProcess.run(["produce", "--brokers", cluster.firstLine, "--from-dlq", "--idle-exit", "1"])
        #expect(result.stdout.hasSuffix("produced 1, failed 1\n"))
        #expect(result.status == 1)
        let read = try ExternalTool.run(["kcat", "-b", cluster.firstLine, "-C", "-t", "calls", "-e", "-q", "-f", "%k|%h|%s\n"])
        #expect(read.output.hasPrefix("c-9|x-replayed-from=calls.dlq/"))
        #expect(read.output.hasSuffix("|\(dead)\n"))
    }

    @Test(arguments: [
        (["produce"], "--brokers is required"),
        (["produce", "--brokers"], "--brokers needs a value"),
        (["produce", "--brokers", "x", "--nope"], "unknown option --nope for 'callpush produce'"),
        (["kafka-mock", "--partitions", "many"], "--partitions expects an integer, got 'many'"),
        (["kafka-mock", "--partitions", "0"], "--partitions must be between 1 and 256, got 0"),
    ])
    func badArgumentsAreOneClearLine(arguments: [String], message: String) throws {
        let result = try CallpushProcess.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message))
        #expect(result.stderr.contains("--help"))
    }
}
