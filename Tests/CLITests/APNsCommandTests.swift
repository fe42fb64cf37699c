import Foundation
import TestSupport
import Testing

/// `callpush mock-apns` and `callpush send` as processes, against each other over TLS.
@Suite(.serialized) struct APNsCommandTests {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    static let token = String(repeating: "ab", count: 32)
    static let deadToken = String(repeating: "cd", count: 32)

    /// A mock in token mode trusting a fresh key, and the flags `send` needs to reach it.
    final class Bed {
        let directory: URL
        let key: String
        let mock: CallpushProcess
        let address: String
        let ca: String

        init(_ extra: [String] = []) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-send-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            key = directory.appendingPathComponent("AuthKey.p8").path
            _ = try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
            mock = try CallpushProcess([
                "mock-apns", "--key-file", key, "--key-id", keyID, "--team-id", teamID, "--bundle-id", "com.example.app",
                "--unregistered-tokens", deadToken,
            ] + extra)
            let parts = mock.firstLine.split(separator: " ")
            address = String(parts.first ?? "")
            ca = String(parts.last?.dropFirst(3) ?? "")
        }

        func send(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
            try CallpushProcess.run(
                ["send", "--topic", "com.example.app", "--key-file", key, "--key-id", keyID, "--team-id", teamID,
                 "--endpoint", address, "--ca-file", ca] + arguments,
                input: input)
        }

        deinit {
            mock.terminate()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func mockPrintsWhereItListensAndItsCertificate() throws {
        let bed = try Bed()
        #expect(bed.address.hasPrefix("127.0.0.1:"))
        #expect(FileManager.default.fileExists(atPath: bed.ca))
        let subject = try ExternalTool.run(["openssl", "x509", "-in", bed.ca, "-noout", "-ext", "subjectAltName"])
        #expect(subject.output.contains("IP Address:127.0.0.1"))
    }

    @Test func incomingHangupAndVoipPresetsAreDelivered() throws {
        let bed = try Bed()
        for preset in ["--incoming", "--hangup", "--voip"] {
            let result = try bed.send(["--token", Self.token, preset, "--caller-name", "Alice"])
            #expect(result.status == 0, "\(preset): \(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("status:         200\n"))
            #expect(result.stdout.contains("result:         delivered\n"))
            #expect(result.stdout.contains("apns-unique-id: "))
        }
        let voip = try bed.send(["--token", Self.token, "--voip"])
        #expect(voip.stdout.contains("topic:          com.example.app.voip (voip)\n"))
        #expect(!voip.stdout.contains(Self.token), "the full device token is never printed")
    }

    @Test func rejectionsExitTwoWithAHint() throws {
        let bed = try Bed()
        let dead = try bed.send(["--token", Self.deadToken, "--incoming"])
        #expect(dead.status == 2)
        #expect(dead.stdout.contains("status:         410\n"))
        #expect(dead.stdout.contains("reason:         Unregistered\n"))
        #expect(dead.stdout.contains("invalid since:  "))
        #expect(dead.stdout.contains("hint:           "))
        let topic = try CallpushProcess.run(
            ["send", "--topic", "com.other.app", "--token", Self.token, "--incoming", "--key-file", bed.key,
             "--key-id", Self.keyID, "--team-id", Self.teamID, "--endpoint", bed.address, "--ca-file", bed.ca])
        #expect(topic.status == 2)
        #expect(topic.stdout.contains("reason:         TopicDisallowed\n"))
        let wrongKey = try CallpushProcess.run(
            ["send", "--topic", "com.example.app", "--token", Self.token, "--incoming", "--key-file", bed.key,
             "--key-id", "ZZZ123DEFG", "--team-id", Self.teamID, "--endpoint", bed.address, "--ca-file", bed.ca])
        #expect(wrongKey.status == 2)
        #expect(wrongKey.stdout.contains("status:         403\n"))
        #expect(wrongKey.stdout.contains("reason:         InvalidProviderToken\n"))
    }

    @Test func rawPayloadFromStdinAndItsSizeLimit() throws {
        let bed = try Bed()
        let ok = try bed.send(["--token", Self.token, "--payload", "-"], input: #"{"aps":{"alert":"hi"},"pushType":1}"#)
        #expect(ok.status == 0, "\(ok.stdout)\(ok.stderr)")
        let big = #"{"aps":{"alert":""# + String(repeating: "x", count: 5000) + #""}}"#
        let tooBig = try bed.send(["--token", Self.token, "--payload", "-"], input: big)
        #expect(tooBig.status == 64)
        #expect(tooBig.stderr.contains("over the 4096-byte limit for alert"))
        let notJSON = try bed.send(["--token", Self.token, "--payload", "-"], input: "hello")
        #expect(notJSON.status == 64)
        #expect(notJSON.stderr.contains("is not a JSON object"))
    }

    @Test func noServerExitsThreeWithTheConnectionError() throws {
        let bed = try Bed()
        let result = try CallpushProcess.run(
            ["send", "--topic", "com.example.app", "--token", Self.token, "--incoming", "--key-file", bed.key,
             "--key-id", Self.keyID, "--team-id", Self.teamID, "--endpoint", "127.0.0.1:1", "--timeout", "2"])
        #expect(result.status == 3)
        #expect(result.stdout.contains("status:         no answer\n"))
        #expect(result.stdout.contains("Connection refused"))
    }

    @Test func untrustedCertificateIsAClearConnectionError() throws {
        let bed = try Bed()
        let result = try CallpushProcess.run(
            ["send", "--topic", "com.example.app", "--token", Self.token, "--incoming", "--key-file", bed.key,
             "--key-id", Self.keyID, "--team-id", Self.teamID, "--endpoint", bed.address, "--timeout", "3"])
        #expect(result.status == 3)
        #expect(result.stdout.contains("certificateVerifyFailed"), "\(result.stdout)")
    }

    @Test(arguments: [
        (["send", "--token", "abc", "--topic", "t", "--incoming", "--certificate", "/etc/hostname", "--private-key", "/etc/hostname"],
         "--token: device token must be an even number of hex digits"),
        (["send", "--token", String(repeating: "ab", count: 32), "--topic", "t", "--certificate", "/etc/hostname",
          "--private-key", "/etc/hostname"], "choose what to send: --incoming, --hangup, --voip or --payload FILE"),
        (["send", "--token", String(repeating: "ab", count: 32), "--topic", "t", "--incoming"], "no APNs credentials"),
        (["send", "--token", String(repeating: "ab", count: 32), "--topic", "t", "--incoming", "--pkcs12", "/nonexistent.p12",
          "--pkcs12-password", "hunter2"], "cannot read /nonexistent.p12"),
        (["send", "--environment", "staging"], "--environment must be one of sandbox, production, got 'staging'"),
        (["mock-apns", "--rate-503", "2"], "--rate-503 must be between 0 and 1, got 2"),
        (["mock-apns", "--key-file", "/etc/hostname"], "--key-file needs --key-id and --team-id"),
    ])
    func usageErrorsAreOneClearLineAndNeverEchoSecrets(arguments: [String], message: String) throws {
        let result = try CallpushProcess.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("hunter2"))
    }

    /// Without --key-file or --client-ca the mock refuses a push without a provider token, as APNs does; a
    /// well-formed token passes (there is no key to check its signature); --accept-any-token keeps the open mode.
    @Test func withoutAKeyAProviderTokenIsRequiredUnlessAnyTokenIsAccepted() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-nokey-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("AnyKey.p8").path
        _ = try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        for (mode, expectedWithoutToken) in [([String](), "403"), (["--accept-any-token"], "200")] {
            let mock = try CallpushProcess(["mock-apns"] + mode)
            defer { mock.terminate() }
            let parts = mock.firstLine.split(separator: " ")
            let address = String(parts.first ?? "")
            let ca = String(parts.last?.dropFirst(3) ?? "")
            let common = ["send", "--topic", "com.example.app", "--token", Self.token, "--incoming", "--endpoint", address,
                          "--ca-file", ca]
            let certificate = ["--certificate", ca, "--private-key", ca.replacingOccurrences(of: "cert.pem", with: "key.pem")]
            let withoutToken = try CallpushProcess.run(common + certificate)
            #expect(withoutToken.stdout.contains("status:         \(expectedWithoutToken)\n"), "\(mode): \(withoutToken.stdout)")
            if expectedWithoutToken == "403" { #expect(withoutToken.stdout.contains("MissingProviderToken")) }
            let withToken = try CallpushProcess.run(common + ["--key-file", key, "--key-id", "ANYKEY1234", "--team-id", "ANYTEAM123"])
            #expect(withToken.status == 0, "\(mode): \(withToken.stdout)\(withToken.stderr)")
        }
        let conflict = try CallpushProcess.run(["mock-apns", "--accept-any-token", "--key-file", key])
        #expect(conflict.status == 64)
        #expect(conflict.stderr.contains("--accept-any-token cannot go with --key-file or --client-ca"))
    }

    @Test func faultsChangeAtRunTimeThroughStdinAndStatsCount() throws {
        let mock = try CallpushProcess(["mock-apns", "--accept-any-token"])
        defer { mock.kill() }
        let parts = mock.firstLine.split(separator: " ")
        let address = String(parts[0])
        let ca = String(parts[1].dropFirst(3))
        let certificateFiles = ["--certificate", ca, "--private-key", ca.replacingOccurrences(of: "cert.pem", with: "key.pem")]
        let before = try CallpushProcess.run(
            ["send", "--topic", "com.example.app", "--token", Self.token, "--incoming", "--endpoint", address, "--ca-file", ca]
                + certificateFiles)
        #expect(before.status == 0, "\(before.stdout)\(before.stderr)")
        #expect(mock.control("set rate-503 1") == ["ok"])
        #expect(mock.control("set rate-503 7") == ["error: cannot set rate-503 to 7"])
        let after = try CallpushProcess.run(
            ["send", "--topic", "com.example.app", "--token", Self.token, "--incoming", "--endpoint", address, "--ca-file", ca]
                + certificateFiles)
        #expect(after.status == 2)
        #expect(after.stdout.contains("status:         503\n"))
        let stats = try #require(try JSONSerialization.jsonObject(with: Data((mock.control("stats", until: nil).first ?? "").utf8))
            as? [String: Any])
        #expect(stats["total"] as? Int == 2)
        let outcomes = try #require(stats["outcomes"] as? [String: Int])
        #expect(outcomes["Success"] == 1)
        #expect(outcomes["ServiceUnavailable"] == 1)
        #expect(mock.terminate() == 0)
    }
}
