import Foundation
import TestSupport
import Testing

/// Secrets never leave the process: `--print-config`, errors and logs hide passwords, including the sensitive
/// librdkafka properties inside `kafka.properties`; `produce` and its DLQ replay take the same Kafka properties as
/// `run`.
@Suite(.serialized) struct SecretsTests {
    static let secrets = ["hunter2", "k3ystore-pw", "s3cret-key-pw", "PEMSECRET", "oauth-s3cret", "p12-pw"]
    static let properties = "security.protocol=SASL_SSL; sasl.mechanisms=PLAIN; sasl.username=bob; sasl.password=hunter2;"
        + "ssl.keystore.password=k3ystore-pw;ssl.key.password=s3cret-key-pw;ssl.key.pem=-----BEGIN PEMSECRET;"
        + "sasl.oauthbearer.config=principal=oauth-s3cret"

    static func leaked(_ text: String) -> [String] { secrets.filter { text.contains($0) } }

    enum Source: String, CaseIterable { case flag, environment, file }

    @Test(arguments: Source.allCases)
    func printConfigHidesEverySecret(source: Source) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        var arguments = ["run", "--kafka-brokers", "k:9092", "--apns-pkcs12", "/etc/hostname", "--print-config"]
        var environment = ["CALLPUSH_APNS_PKCS12_PASSWORD": "p12-pw"]
        switch source {
        case .flag:
            arguments += ["--kafka-properties", Self.properties]
        case .environment:
            environment["CALLPUSH_KAFKA_PROPERTIES"] = Self.properties
        case .file:
            let json = try JSONSerialization.data(withJSONObject: ["kafka": ["properties": Self.properties]])
            try json.write(to: file)
            arguments += ["--config", file.path]
        }
        let result = try CallpushProcess.run(arguments, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.leaked(result.stdout + result.stderr).isEmpty)
        let line = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("kafka.properties = ") })
        #expect(line.hasPrefix(
            "kafka.properties = security.protocol=SASL_SSL;sasl.mechanisms=PLAIN;sasl.username=bob;sasl.password=(hidden);"
                + "ssl.keystore.password=(hidden);ssl.key.password=(hidden);ssl.key.pem=(hidden);"
                + "sasl.oauthbearer.config=(hidden)  ["))
        #expect(result.stdout.contains("apns.pkcs12-password = (hidden)  [environment CALLPUSH_APNS_PKCS12_PASSWORD]\n"))
    }

    @Test func malformedPropertiesAreReportedByPositionNotByText() throws {
        let run = try CallpushProcess.run(
            ["run", "--kafka-brokers", "k:9092", "--apns-pkcs12", "/etc/hostname"],
            environment: ["CALLPUSH_KAFKA_PROPERTIES": "sasl.username=bob;hunter2"])
        #expect(run.status == 64)
        #expect(run.stderr.contains(
            "callpush: --kafka-properties: entry 2 is not key=value (entries are separated by ';') (from environment CALLPUSH_KAFKA_PROPERTIES)"))
        let produce = try CallpushProcess.run(
            ["produce", "--brokers", "127.0.0.1:1", "--kafka-properties", "sasl.password=hunter2;=hunter2"], input: "")
        #expect(produce.status == 64)
        #expect(produce.stderr.contains("callpush: --kafka-properties: entry 2 is not key=value"))
        // librdkafka refuses this one (OAuth/OIDC is not in Debian's build): its name is shown, never its value.
        let refused = try CallpushProcess.run(
            ["run", "--kafka-brokers", "k:9092", "--apns-pkcs12", "/etc/hostname", "--print-config",
             "--kafka-properties", "sasl.oauthbearer.client.secret=oauth-s3cret"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("sasl.oauthbearer.client.secret"))
        #expect(Self.leaked(run.stdout + run.stderr + produce.stdout + produce.stderr + refused.stdout + refused.stderr).isEmpty)
    }

    @Test func produceAppliesKafkaPropertiesFromTheFlagOrTheEnvironment() throws {
        let cluster = try CallpushProcess(["kafka-mock", "--topics", "calls"])
        defer { cluster.terminate() }
        // 2 KB of custom data: fine by default, over a message.max.bytes of 1000 set through the properties.
        let large = KafkaCommandTests.event("e-large", call: "c-large")
            .replacingOccurrences(of: "}", with: ",\"custom\":{\"pad\":\"\(String(repeating: "x", count: 2000))\"}}")
        let plain = try CallpushProcess.run(["produce", "--brokers", cluster.firstLine], input: large)
        #expect(plain.stdout.hasSuffix("produced 1, failed 0\n"), "\(plain.stderr)")
        let limited = "message.max.bytes=1000;sasl.password=hunter2"
        let viaFlag = try CallpushProcess.run(
            ["produce", "--brokers", cluster.firstLine, "--kafka-properties", limited], input: large)
        let viaEnvironment = try CallpushProcess.run(
            ["produce", "--brokers", cluster.firstLine], environment: ["CALLPUSH_KAFKA_PROPERTIES": limited], input: large)
        for result in [viaFlag, viaEnvironment] {
            #expect(result.status == 1)
            #expect(result.stdout.hasSuffix("produced 0, failed 1\n"), "\(result.stderr)")
            #expect(Self.leaked(result.stdout + result.stderr).isEmpty)
        }
    }

    @Test func deadLetterReplayAppliesKafkaProperties() throws {
        let cluster = try CallpushProcess(["kafka-mock", "--topics", "calls,calls.dlq"])
        defer { cluster.terminate() }
        let seeded = try ExternalTool.run(["kcat", "-b", cluster.firstLine, "-P", "-t", "calls.dlq", "-K", "|"],
                                  input: "c-9|\(KafkaCommandTests.event("e-dead", call: "c-9"))\n")
        #expect(seeded.status == 0)
        // The replay's consumer starts at the end of the topic once the properties say so: nothing to replay.
        let latest = try CallpushProcess.run([
            "produce", "--brokers", cluster.firstLine, "--from-dlq", "--idle-exit", "1", "--group", "replay-latest",
            "--kafka-properties", "auto.offset.reset=latest;sasl.password=hunter2",
        ])
        #expect(latest.status == 0, "\(latest.stderr)")
        #expect(latest.stdout.hasSuffix("produced 0, failed 0\n"))
        let earliest = try CallpushProcess.run(
            ["produce", "--brokers", cluster.firstLine, "--from-dlq", "--idle-exit", "1", "--group", "replay-default"])
        #expect(earliest.stdout.hasSuffix("produced 1, failed 0\n"), "\(earliest.stderr)")
        #expect(Self.leaked(latest.stdout + latest.stderr).isEmpty)
    }

    /// A worker at debug level whose Kafka client carries a SASL password and a TLS key password (unused with the
    /// mock's plaintext listener): everything it logs from start to stop is free of them.
    @Test func workerLogsNeverContainSecrets() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = directory + "/AuthKey.p8"
        #expect(try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]).status == 0)
        let cluster = try CallpushProcess(["kafka-mock", "--partitions", "2"])
        defer { cluster.terminate() }
        let worker = try CallpushProcess([
            "run", "--kafka-brokers", cluster.firstLine, "--kafka-group", "secrets-test", "--kafka-session-timeout", "6",
            "--apns-key-file", key, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
            "--metrics-port", "0", "--log-level", "debug",
            "--kafka-properties", "sasl.username=bob;sasl.password=hunter2;ssl.key.password=s3cret-key-pw",
        ], readFirstLine: false)
        let log = { (try? String(contentsOfFile: worker.logPath, encoding: .utf8)) ?? "" }
        let running = await Eventually.waitUntil(timeout: .seconds(60), interval: .milliseconds(100)) {
            log().contains("\"message\":\"callpush running\"")
        }
        #expect(running, "\(worker.logTail)")
        #expect(worker.terminate() == 0)
        let text = log()
        #expect(text.contains("\"message\":\"stopped\""))
        #expect(Self.leaked(text).isEmpty)
    }
}
