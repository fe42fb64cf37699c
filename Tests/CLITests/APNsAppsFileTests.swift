import Foundation
import TestSupport
import Testing

/// The apps file (`apns.apps`) as `callpush run --config` and `callpush send --apps` read it: every problem is one
/// line naming the file and the entry, and `send` picks the credentials of the app of `--topic`.
@Suite(.serialized) final class APNsAppsFileTests {
    /// Two fresh keys, `key1.p8` and `key2.p8`, and the test's files.
    let directory = NSTemporaryDirectory() + "callpush-apps-file-\(UUID().uuidString.prefix(8))"

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in ["key1.p8", "key2.p8"] {
            _ = try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(directory)/\(name)"])
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// An app of team `team` signing with `key` (a file in ``directory``) as `kid`.
    func tokenApp(_ bundleID: String, key: String = "key1.p8", kid: String = "KEY0000001", team: String = "TEAM000001") -> String {
        #"{"bundle-id":"\#(bundleID)","key-file":"\#(directory)/\#(key)","key-id":"\#(kid)","team-id":"\#(team)"}"#
    }

    /// (the `apns` object of the file, the one problem line; CONFIG stands for the file's path, KEYFILE for key1.p8's).
    static let problems: [(String, String)] = [
        (#"{"apps":{"bundle-id":"com.a"}}"#, "CONFIG: apns.apps must be a list of objects"),
        (#"{"apps":[]}"#, "CONFIG: apns.apps lists no apps"),
        (#"{"apps":[{"bundle-id":"com.a","colour":"red","key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM000001"}]}"#,
         "CONFIG: apns.apps[0]: unknown key colour"),
        (#"{"apps":[{"bundle-id":"com.a","mapping":{"ring-tone":"x"},"key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM000001"}]}"#,
         "CONFIG: apns.apps[0]: unknown mapping key ring-tone"),
        (#"{"apps":[{"bundle-id":"com.a","mapping":{"loc-key":1},"key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM000001"}]}"#,
         "CONFIG: apns.apps[0]: mapping must be an object of strings"),
        (#"{"apps":[{"bundle-id":"com.a","key-file":"KEYFILE","key-id":12,"team-id":"TEAM000001"}]}"#,
         "CONFIG: apns.apps[0]: key-id must be a string"),
        (#"{"apps":[{"bundle-id":["com.a"],"key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM000001"}]}"#,
         "CONFIG: apns.apps[0]: bundle-id must be a string"),
        (#"{"apps":[{"key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM000001"}]}"#, "CONFIG: apns.apps[0]: bundle-id is required"),
        (#"{"apps":[{"bundle-id":"com.a"}]}"#,
         "CONFIG: apns.apps[0] (com.a): no APNs credentials: give key-file (token auth), certificate or pkcs12"),
        (#"{"apps":[{"bundle-id":"com.a","key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM000001","pkcs12":"/x.p12"}]}"#,
         "CONFIG: apns.apps[0] (com.a): give only one of key-file, certificate and pkcs12"),
        (#"{"apps":[{"bundle-id":"com.a","key-file":"/nonexistent/AuthKey.p8","key-id":"KEY0000001","team-id":"TEAM000001"}]}"#,
         "CONFIG: apns.apps[0] (com.a): cannot read /nonexistent/AuthKey.p8"),
        (#"{"apps":[{"bundle-id":"com.a","key-file":"KEYFILE","key-id":"KEY1","team-id":"TEAM000001"}]}"#,
         "CONFIG: apns.apps[0] (com.a): key-id must be the 10-character Key ID of KEYFILE"),
        (#"{"apps":[{"bundle-id":"com.a","key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM1"}]}"#,
         "CONFIG: apns.apps[0] (com.a): team-id must be your 10-character Team ID"),
        (#"{"apps":[{"bundle-id":"com.a","certificate":"KEYFILE"}]}"#, "CONFIG: apns.apps[0] (com.a): certificate needs private-key"),
        (#"{"apps":[{"bundle-id":"com.a","key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM000001"},"#
            + #"{"bundle-id":"com.a","key-file":"KEYFILE","key-id":"KEY0000001","team-id":"TEAM000001"}]}"#,
         "bundle id com.a is configured twice"),
    ]

    @Test(arguments: problems.indices) func eachProblemOfTheFileIsOneLine(_ index: Int) throws {
        let (apns, expected) = Self.problems[index]
        let file = "\(directory)/config-\(index).json"
        let key = "\(directory)/key1.p8"
        try "{\"apns\":\(apns.replacingOccurrences(of: "KEYFILE", with: key))}".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try CallpushProcess.run(["run", "--kafka-brokers", "localhost:9092", "--config", file, "--print-config"])
        #expect(result.status == 64)
        let line = expected.replacingOccurrences(of: "CONFIG", with: file).replacingOccurrences(of: "KEYFILE", with: key)
        #expect(result.stderr == "callpush: \(line)\ncallpush: see 'callpush run --help'\n")
    }

    @Test func theFileOrTheCredentialFlagsNotBoth() throws {
        let file = "\(directory)/config-flags.json"
        try "{\"apns\":{\"apps\":[\(tokenApp("com.a"))]}}".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try CallpushProcess.run([
            "run", "--kafka-brokers", "localhost:9092", "--config", file, "--apns-key-file", "\(directory)/key1.p8", "--print-config",
        ])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("callpush: give either apns.apps in the config file or --apns-key-file, not both\n"))
    }

    /// Two apps of two teams with their own keys, one mock trusting both: `send --apps` signs with the key of the
    /// app of `--topic` (the mock checks each token against its key's team and shows its kid), `--voip` included;
    /// a bundle id the file does not list is refused before anything is sent.
    @Test func sendPicksTheAppOfItsTopic() throws {
        let file = "\(directory)/apps-send.json"
        let apps = [tokenApp("com.example.app"), tokenApp("com.brand.app", key: "key2.p8", kid: "KEY0000002", team: "TEAM000002")]
        try "{\"apns\":{\"apps\":[\(apps.joined(separator: ","))]}}".write(toFile: file, atomically: true, encoding: .utf8)
        let mock = try CallpushProcess(["mock-apns", "--apps", file, "--record", "100"])
        defer { mock.terminate() }
        let parts = mock.firstLine.split(separator: " ")
        func send(_ arguments: [String]) throws -> ProcessResult {
            try CallpushProcess.run(
                ["send", "--apps", file, "--endpoint", String(parts[0]), "--ca-file", String(parts[1].dropFirst(3)),
                 "--token", String(repeating: "ab", count: 32)] + arguments)
        }
        for (topic, preset) in [("com.brand.app", "--incoming"), ("com.example.app", "--incoming"), ("com.brand.app", "--voip")] {
            let result = try send(["--topic", topic, preset])
            #expect(result.status == 0, "\(topic) \(preset): \(result.stdout)\(result.stderr)")
        }
        let signers = mock.control("deliveries", until: "end").dropLast().compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["key_id"] as? String
        }
        #expect(signers == ["KEY0000002", "KEY0000001", "KEY0000002"])
        let unknown = try send(["--topic", "com.unknown.app", "--incoming"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("callpush: no app for bundle id 'com.unknown.app' in \(file)\n"))
        #expect(mock.control("deliveries", until: "end").count == 4, "nothing more was sent")
    }
}
