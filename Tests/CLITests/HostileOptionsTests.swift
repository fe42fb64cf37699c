import Foundation
import TestSupport
import Testing

/// Settings an operator can get wrong: each is refused at start with one line that names the setting and what to do,
/// exit status 64 (usage) or 1 (cannot start), and never a trap, a source location or a silent misreading.
@Suite struct HostileOptionsTests {
    /// A signing key for the whole suite, removed when the test process exits.
    static let key: String = {
        let path = ((try? TemporaryDirectory.makeForProcess(prefix: "callpush-hostile")) ?? NSTemporaryDirectory()) + "/key.p8"
        _ = try? ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
        return path
    }()

    static let credentials = ["--apns-key-file", key, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ"]

    /// `callpush run` with `arguments`: its status and its stderr lines.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, lines: [String]) {
        let result = try CallpushProcess.run(
            ["run", "--kafka-brokers", "127.0.0.1:1", "--metrics-port", "0", "--log-level", "critical"] + credentials + arguments,
            environment: environment, timeout: 30)
        #expect(!result.stderr.contains(".swift:"), "no source locations: \(result.stderr)")
        return (result.status, result.stderr.split(separator: "\n").map(String.init))
    }

    @Test(arguments: [
        ("9999999999999999h", "callpush: --kafka-retry-tiers: '9999999999999999h' is outside 100ms…1h (a retry later than an hour outlives every call it could ring)"),
        ("5s,2000000h", "callpush: --kafka-retry-tiers: '2000000h' is outside 100ms…1h (a retry later than an hour outlives every call it could ring)"),
        ("10ms", "callpush: --kafka-retry-tiers: '10ms' is outside 100ms…1h (a retry later than an hour outlives every call it could ring)"),
        ("-5s", "callpush: --kafka-retry-tiers: '-5s' is not a delay like 500ms, 5s, 2m or 1h"),
        ("5x", "callpush: --kafka-retry-tiers: '5x' is not a delay like 500ms, 5s, 2m or 1h"),
    ])
    func retryTiersOutOfRangeAreRefused(tiers: String, line: String) throws {
        let result = try Self.run(["--kafka-retry-tiers", tiers, "--print-config"])
        #expect(result.status == 64)
        #expect(result.lines.contains(line), "\(result.lines)")
    }

    /// The same value from the config file and from the environment is checked the same way.
    @Test func retryTiersFromFileAndEnvironmentAreChecked() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-\(UUID()).json")
        try #"{"kafka":{"retry-tiers":"5s,9223372036854775807ms"}}"#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try Self.run(["--config", file.path, "--print-config"])
        #expect(fromFile.status == 64)
        #expect(fromFile.lines.contains { $0.contains("'9223372036854775807ms' is outside 100ms…1h") }, "\(fromFile.lines)")
        let fromEnvironment = try Self.run(["--print-config"], environment: ["CALLPUSH_KAFKA_RETRY_TIERS": "99999999999999999m"])
        #expect(fromEnvironment.status == 64)
        #expect(fromEnvironment.lines.contains { $0.contains("'99999999999999999m' is outside 100ms…1h") }, "\(fromEnvironment.lines)")
    }

    @Test(arguments: [
        ("enable.auto.offset.store=true", "an offset is stored only once its event's outcome is final (at-least-once)"),
        ("enable.auto.commit=false", "the stored offsets are committed"),
        ("partition.assignment.strategy=roundrobin", "partition p of the calls topic and of every retry tier is on one worker"),
        ("isolation.level=read_uncommitted", "an aborted upstream transaction never rings"),
        ("acks=1", "only when every in-sync replica has it"),
        ("enable.idempotence=false", "written once, in order"),
    ])
    func propertiesTheGuaranteesRestOnAreRefused(property: String, guarantee: String) throws {
        let result = try Self.run(["--kafka-properties", "linger.ms=2;" + property, "--print-config"])
        #expect(result.status == 64)
        let name = String(property.prefix { $0 != "=" })
        let refusal = result.lines.filter { $0.hasPrefix("callpush: --kafka-properties: \(name) is set by callpush and may not be changed: ") }
        #expect(refusal.count == 1 && refusal[0].contains(guarantee), "\(result.lines)")
    }

    @Test func aCAFileWithoutACustomEndpointIsRefused() throws {
        let result = try Self.run(["--apns-ca-file", "/etc/hostname", "--print-config"])
        #expect(result.status == 64)
        #expect(result.lines.contains(
            "callpush: --apns-ca-file applies only with --apns-endpoint: Apple's hosts are verified against the system trust store"),
            "\(result.lines)")
    }

    @Test(arguments: [
        ("/etc/hostname", "CA file /etc/hostname holds no PEM certificate; give the PEM certificate of the CA that signed the server's"),
        ("/nonexistent/ca.pem", "CA file /nonexistent/ca.pem cannot be read (No such file or directory)"),
    ])
    func aBadCAFileSaysWhatIsWrongWithIt(path: String, problem: String) throws {
        let result = try Self.run(["--apns-endpoint", "127.0.0.1:1", "--apns-ca-file", path])
        #expect(result.status == 1)
        #expect(result.lines.contains { $0.hasPrefix("callpush: cannot start: ") && $0.contains(problem) }, "\(result.lines)")
    }

    @Test func aKeyFileThatIsNoKeySaysSo() throws {
        let result = try CallpushProcess.run([
            "run", "--kafka-brokers", "127.0.0.1:1", "--metrics-port", "0", "--log-level", "critical",
            "--apns-key-file", "/etc/hostname", "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
        ], timeout: 30)
        #expect(result.status == 1)
        #expect(result.stderr.contains("callpush: cannot start: ") && result.stderr.contains("/etc/hostname"), "\(result.stderr)")
        #expect(!result.stderr.contains(".swift:"), "\(result.stderr)")
    }
}
