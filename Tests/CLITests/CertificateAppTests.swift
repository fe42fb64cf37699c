import Foundation
import TestSupport
import Testing
@preconcurrency import Glibc

/// Token apps of two teams and a certificate app in one run, as operators set it up: `callpush kafka-mock`, ONE
/// `callpush mock-apns --apps FILE --client-ca CA` that knows all three apps, and `callpush run --config FILE`,
/// with call events from kcat. The client certificate and its CA are made by the `openssl` CLI.
@Suite(.serialized) final class CertificateAppTests {
    /// The token apps: bundle id, key id (and key file name), team id.
    static let tokenApps = [
        (bundleID: "com.example.app", keyID: "KEY0000001", teamID: "TEAM000001"),
        (bundleID: "com.brand.app", keyID: "KEY0000002", teamID: "TEAM000002"),
    ]
    static let certificateApp = "com.example.enterprise"
    static let certificateLabel = "certificate:com.example.enterprise"

    let directory: String
    let authority: TestCertificateAuthority
    /// The certificate app's client certificate, signed by ``authority``.
    let enterprise: (certificatePath: String, privateKeyPath: String)
    let kafka: CallpushProcess
    let apns: CallpushProcess
    let endpoint: String
    let serverCA: String
    /// The workers' `--config` file, which the mock reads as its apps file too.
    let configPath: String
    private(set) var worker: CallpushProcess?
    private(set) var metricsPort = 0
    /// Event id → call id of every event produced.
    private(set) var produced: [String: String] = [:]

    init() throws {
        directory = NSTemporaryDirectory() + "callpush-certificate-apps-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for app in Self.tokenApps {
            _ = try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                              "-out", "\(directory)/\(app.keyID).p8"])
        }
        authority = try TestCertificateAuthority(directory: directory, name: "apns-client-ca")
        enterprise = try authority.issueClientCertificate("enterprise", commonName: "Apple Push Services: \(Self.certificateApp)")
        configPath = "\(directory)/config.json"
        let topics = ["calls", "calls.retry.1s", "calls.dlq", "apns.tokens.invalidated", "calls.outcomes"]
        kafka = try CallpushProcess(["kafka-mock", "--partitions", "2", "--topics", topics.joined(separator: ",")])
        try Self.writeConfig(
            to: configPath, bundleIDs: Self.tokenApps.map(\.bundleID) + [Self.certificateApp], directory: directory,
            certificate: enterprise)
        apns = try CallpushProcess(
            ["mock-apns", "--apps", configPath, "--client-ca", authority.certificatePath, "--record", "100000"])
        let parts = apns.firstLine.split(separator: " ")
        endpoint = String(parts.first ?? "")
        serverCA = String(parts.last?.dropFirst(3) ?? "")
    }

    deinit {
        worker?.kill()
        apns.terminate()
        kafka.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Set-up

    /// Writes `{"apns":{"apps":[…]}}` with the listed apps (token apps with their own key and team) to `path`.
    static func writeConfig(
        to path: String, bundleIDs: [String], directory: String, certificate: (certificatePath: String, privateKeyPath: String)
    ) throws {
        var apps: [String] = []
        for app in tokenApps where bundleIDs.contains(app.bundleID) {
            apps.append(#"{"bundle-id":"\#(app.bundleID)","key-file":"\#(directory)/\#(app.keyID).p8","key-id":"\#(app.keyID)","team-id":"\#(app.teamID)"}"#)
        }
        if bundleIDs.contains(certificateApp) {
            apps.append(#"{"bundle-id":"\#(certificateApp)","certificate":"\#(certificate.certificatePath)","private-key":"\#(certificate.privateKeyPath)"}"#)
        }
        try #"{"apns":{"apps":[\#(apps.joined(separator: ","))]}}"#.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Starts `callpush run --config` and waits until it has its partitions.
    func startWorker() async throws {
        metricsPort = FreePort.next()
        worker = try CallpushProcess([
            "run", "--kafka-brokers", kafka.firstLine, "--kafka-group", "certificate-apps", "--kafka-receipts",
            "--kafka-retry-tiers", "1s", "--kafka-session-timeout", "6", "--apns-endpoint", endpoint,
            "--apns-ca-file", serverCA, "--config", configPath, "--metrics-port", String(metricsPort),
            "--log-level", "warning",
        ], readFirstLine: false)
        let ready = await Eventually.waitUntil(timeout: .seconds(60), interval: .milliseconds(200)) {
            metrics().contains("\ncallpush_ready 1\n")
        }
        #expect(ready, "\(worker?.logTail ?? "")")
    }

    /// The worker's `/metrics` text ("" when unreachable).
    func metrics() -> String {
        (try? ExternalTool.run(["curl", "-s", "--max-time", "2", "localhost:\(metricsPort)/metrics"]).output) ?? ""
    }

    /// The value of the series whose line starts with `series` followed by a space.
    func metric(_ series: String) -> Double? {
        ExpositionSeries.value(series, in: metrics())
    }

    // MARK: - Traffic

    /// Produces one incoming call per (call id, topic, push) with kcat, keyed by call id.
    func produce(_ calls: [(callID: String, topic: String, push: String)]) throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let lines = calls.enumerated().map { index, call -> String in
            let eventID = UUID().uuidString.lowercased()
            produced[eventID] = call.callID
            let token = String(format: "%064x", index + 1)
            return "\(call.callID)\t{\"event_id\":\"\(eventID)\",\"type\":\"incoming\",\"call_id\":\"\(call.callID)\","
                + "\"device_token\":\"\(token)\",\"push\":\"\(call.push)\",\"topic\":\"\(call.topic)\","
                + "\"environment\":\"production\",\"created_at\":\(now),\"ring_timeout_s\":600}"
        }
        let result = try ExternalTool.run(
            ["kcat", "-b", kafka.firstLine, "-P", "-t", "calls", "-K", "\t"], input: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0, "\(result.output)")
    }

    /// `count` alert calls `<prefix>-<n>` to `topic`.
    static func calls(_ prefix: String, _ topic: String, _ count: Int, push: String = "alert")
        -> [(callID: String, topic: String, push: String)]
    {
        (0..<count).map { ("\(prefix)-\($0)", topic, push) }
    }

    /// Final receipts (not `retried`) by event id: outcome and reason.
    func finalReceipts() throws -> [String: (outcome: String, reason: String?)] {
        var receipts: [String: (outcome: String, reason: String?)] = [:]
        for object in try OutcomeReceipts.read(brokers: kafka.firstLine) {
            guard let id = object["event_id"] as? String, let outcome = object["outcome"] as? String, outcome != "retried"
            else { continue }
            receipts[id] = (outcome, object["reason"] as? String)
        }
        return receipts
    }

    /// Waits until every produced event has its final receipt.
    func waitForAllOutcomes() async throws -> [String: (outcome: String, reason: String?)] {
        var receipts: [String: (outcome: String, reason: String?)] = [:]
        try await Eventually.waitUntil(timeout: .seconds(120), interval: .milliseconds(500)) {
            receipts = try finalReceipts()
            return !produced.keys.contains { receipts[$0] == nil }
        }
        return receipts
    }

    /// One push the mock answered 200: its call id (by its apns-id, the event id: VoIP pushes carry no collapse
    /// id), the `kid` of its token, and how it was authenticated.
    struct Delivery {
        let callID: String
        let keyID: String?
        let auth: String?
        let certificate: String?
    }

    func deliveries() -> [Delivery] {
        apns.control("deliveries", until: "end").dropLast().compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let apnsID = object["apns_id"] as? String, let callID = produced[apnsID.lowercased()]
            else { return nil }
            return Delivery(callID: callID, keyID: object["key_id"] as? String, auth: object["auth"] as? String,
                            certificate: object["certificate"] as? String)
        }
    }

    /// `callpush send` to the mock with the given credential flags.
    func send(topic: String, _ credentials: [String]) throws -> ProcessResult {
        try CallpushProcess.run(
            ["send", "--topic", topic, "--token", String(repeating: "ab", count: 32), "--incoming", "--endpoint", endpoint,
             "--ca-file", serverCA, "--timeout", "5"] + credentials)
    }

    var mockTotal: Int {
        let stats = apns.control("stats", until: nil).first ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(stats.utf8)) as? [String: Any])?["total"] as? Int ?? -1
    }

    // MARK: - Tests

    /// Every push carries its own app's credentials: the mock verified each token against its key and team and
    /// each certificate push came over a connection with the app's certificate (its fingerprint, as openssl computes
    /// it, no token); an unknown bundle id is dead-lettered `unknown_app`. The certificate may not push to a token
    /// app's topic (400 TopicDisallowed); a CA-signed certificate no app has is 403 BadCertificate; a certificate
    /// another CA signed does not get through the TLS handshake.
    @Test func threeAppsOfTwoTeamsAndACertificateShareOneMock() async throws {
        // The apps' certificates and the CA, combined for OpenSSL at start, are not left in the temporary directory.
        let combinedCA = NSTemporaryDirectory() + "callpush-mock-client-ca-\(apns.pid).pem"
        #expect(!FileManager.default.fileExists(atPath: combinedCA))
        try await startWorker()
        try produce(
            Self.calls("a", "com.example.app", 20) + Self.calls("b", "com.brand.app", 20)
                + Self.calls("e", Self.certificateApp, 20) + Self.calls("v", Self.certificateApp, 5, push: "voip")
                + [("u-0", "com.unknown.app", "alert")])
        let receipts = try await waitForAllOutcomes()
        let unknownEvent = try #require(produced.first { $0.value == "u-0" }?.key)
        #expect(produced.keys.allSatisfy { receipts[$0] != nil }, "\(worker?.logTail ?? "")")
        #expect(produced.filter { $0.key != unknownEvent }.allSatisfy { receipts[$0.key]?.outcome == "delivered" },
                "\(receipts.values.map(\.outcome))")
        #expect(receipts[unknownEvent]?.outcome == "dead_lettered")
        let dlq = try ExternalTool.run(["kcat", "-b", kafka.firstLine, "-C", "-t", "calls.dlq", "-e", "-q", "-f", "%k %h\n"])
        let deadLetters = dlq.output.split(separator: "\n")
        #expect(deadLetters.count == 1 && deadLetters.first?.hasPrefix("u-0 ") == true, "\(dlq.output)")
        #expect(deadLetters.first?.contains("x-dlq-reason=unknown_app") == true, "\(dlq.output)")

        let fingerprint = try TestCertificateAuthority.fingerprint(ofCertificate: enterprise.certificatePath)
        let deliveries = deliveries()
        #expect(deliveries.count == 65)
        var byApp: [String: Int] = [:]
        for delivery in deliveries {
            switch delivery.callID.prefix(2) {
            case "a-":
                #expect(delivery.auth == "token" && delivery.keyID == "KEY0000001" && delivery.certificate == nil, "\(delivery)")
                byApp["com.example.app", default: 0] += 1
            case "b-":
                #expect(delivery.auth == "token" && delivery.keyID == "KEY0000002" && delivery.certificate == nil, "\(delivery)")
                byApp["com.brand.app", default: 0] += 1
            default:
                #expect(delivery.auth == "certificate" && delivery.certificate == fingerprint && delivery.keyID == nil,
                        "\(delivery)")
                byApp[Self.certificateApp, default: 0] += 1
            }
        }
        #expect(byApp == ["com.example.app": 20, "com.brand.app": 20, Self.certificateApp: 25])

        // The certificate app's certificate, pushing to the other team's app: refused as APNs does.
        let certificate = ["--certificate", enterprise.certificatePath, "--private-key", enterprise.privateKeyPath]
        let otherTopic = try send(topic: "com.brand.app", certificate)
        #expect(otherTopic.status == 2, "\(otherTopic.stdout)\(otherTopic.stderr)")
        #expect(otherTopic.stdout.contains("status:         400\n") && otherTopic.stdout.contains("reason:         TopicDisallowed\n"))
        // Signed by the mock's CA but no app's: the TLS layer lets it in, APNs' answer is BadCertificate.
        let unregistered = try authority.issueClientCertificate("unregistered", commonName: "Apple Push Services: com.other.app")
        let notAnApp = try send(topic: Self.certificateApp, ["--certificate", unregistered.certificatePath,
                                                             "--private-key", unregistered.privateKeyPath])
        #expect(notAnApp.status == 2, "\(notAnApp.stdout)\(notAnApp.stderr)")
        #expect(notAnApp.stdout.contains("status:         403\n") && notAnApp.stdout.contains("reason:         BadCertificate\n"))
        // Signed by another CA: no answer (the handshake fails), and the mock saw no request.
        let before = mockTotal
        let stranger = try TestCertificateAuthority(directory: directory, name: "other-ca")
            .issueClientCertificate("stranger", commonName: "Apple Push Services: \(Self.certificateApp)")
        let untrusted = try send(topic: Self.certificateApp, ["--certificate", stranger.certificatePath,
                                                              "--private-key", stranger.privateKeyPath])
        #expect(untrusted.status == 3, "\(untrusted.stdout)\(untrusted.stderr)")
        #expect(untrusted.stdout.contains("status:         no answer\n"))
        #expect(mockTotal == before)
        #expect(worker?.terminate() == 0)
    }

    /// An app of the apps file may give its certificate as a PKCS12 file with no password (the entry has no
    /// `pkcs12-password`): `send --apps` reads it and pushes with that certificate (a read of the password that
    /// expected the flag's default stopped the process on such an entry).
    @Test func aPKCS12AppWithoutAPasswordPushes() throws {
        let bundle = "\(directory)/enterprise.p12"
        _ = try ExternalTool.run(["openssl", "pkcs12", "-export", "-in", enterprise.certificatePath, "-inkey",
                          enterprise.privateKeyPath, "-out", bundle, "-passout", "pass:"])
        let file = "\(directory)/apps-p12.json"
        try #"{"apns":{"apps":[{"bundle-id":"\#(Self.certificateApp)","pkcs12":"\#(bundle)"}]}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let before = mockTotal
        let result = try send(topic: Self.certificateApp, ["--apps", file])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("status:         200\n"), "\(result.stdout)")
        let fingerprint = try TestCertificateAuthority.fingerprint(ofCertificate: enterprise.certificatePath)
        #expect(mockTotal == before + 1)
        let last = try #require(apns.control("deliveries", until: "end").dropLast().last)
        let delivery = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        #expect(delivery?["auth"] as? String == "certificate" && delivery?["certificate"] as? String == fingerprint, "\(last)")
    }

    /// A reload that removes a credential takes its client's `callpush_apns_*{credential=…}` series out of
    /// `/metrics` once the old client is gone; the kept credentials' series go on counting.
    @Test func aReloadThatRemovesACredentialRemovesItsSeries() async throws {
        try await startWorker()
        try produce(Self.calls("a", "com.example.app", 10) + Self.calls("b", "com.brand.app", 10)
                    + Self.calls("e", Self.certificateApp, 10))
        _ = try await waitForAllOutcomes()
        let success = #"callpush_apns_requests_total{credential="CREDENTIAL",reason="Success",status="200"}"#
        func delivered(_ credential: String) -> Double? { metric(success.replacingOccurrences(of: "CREDENTIAL", with: credential)) }
        #expect(delivered("KEY0000001") == 10)
        #expect(delivered("KEY0000002") == 10)
        #expect(delivered(Self.certificateLabel) == 10)

        try Self.writeConfig(to: configPath, bundleIDs: ["com.example.app", Self.certificateApp], directory: directory,
                             certificate: enterprise)
        try #require(worker).child.signal(SIGHUP)
        let reloaded = await Eventually.waitUntil(timeout: .seconds(30), interval: .milliseconds(200)) {
            metric(#"callpush_apns_config_reloads_total{result="ok"}"#) == 1
        }
        #expect(reloaded, "\(worker?.logTail ?? "")")
        let removed = await Eventually.waitUntil(timeout: .seconds(30), interval: .milliseconds(200)) {
            let text = metrics()
            return !text.isEmpty && !text.contains(#"credential="KEY0000002""#)
        }
        #expect(removed, "\(metrics().split(separator: "\n").filter { $0.contains("KEY0000002") })")

        // The kept credentials' series still count (the old and new clients of a kept key shared them).
        try produce(Self.calls("a2", "com.example.app", 10) + Self.calls("e2", Self.certificateApp, 10)
                    + [("b2-0", "com.brand.app", "alert")])
        let receipts = try await waitForAllOutcomes()
        #expect(receipts.values.filter { $0.outcome == "dead_lettered" }.count == 1, "com.brand.app is unknown now")
        #expect(await Eventually.waitUntil(timeout: .seconds(10), interval: .milliseconds(200)) {
            delivered("KEY0000001") == 20 && delivered(Self.certificateLabel) == 20
        }, "\(metrics().split(separator: "\n").filter { $0.hasPrefix("callpush_apns_requests_total") })")
        #expect(!metrics().contains(#"credential="KEY0000002""#))
        #expect(worker?.terminate() == 0)
    }
}
