import Foundation
import TestSupport
import Testing
@preconcurrency import Glibc

/// The processes ``LiveDashboardTests`` scrapes: `callpush kafka-mock`, a faulty `callpush mock-apns --apps
/// --client-ca` and one `callpush run --config` with three apps (two token apps, one of whose keys the mock does not
/// know, and a certificate app), fed with call traffic from kcat that touches every panel of the dashboard.
final class LiveDashboardBed {
    static let knownApp = (bundleID: "com.example.app", keyID: "KEY0000001", teamID: "TEAM000001")
    /// A token app the worker has and the mock does not: its pushes get 403 InvalidProviderToken.
    static let revokedApp = (bundleID: "com.brand.app", keyID: "KEY0000002", teamID: "TEAM000002")
    static let certificateApp = "com.example.enterprise"
    static let unregisteredToken = String(repeating: "de", count: 32)
    static let badToken = String(repeating: "ba", count: 32)

    let directory: String
    let kafka: CallpushProcess
    let apns: CallpushProcess
    private(set) var worker: CallpushProcess?
    private(set) var metricsPort = 0
    private let configPath: String
    private var sequence = 0

    init() throws {
        directory = NSTemporaryDirectory() + "callpush-live-dashboard-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for app in [Self.knownApp, Self.revokedApp] {
            _ = try ExternalTool.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                              "-out", "\(directory)/\(app.keyID).p8"])
        }
        let authority = try TestCertificateAuthority(directory: directory, name: "apns-client-ca")
        let enterprise = try authority.issueClientCertificate("enterprise", commonName: "Apple Push Services: \(Self.certificateApp)")
        let keys = directory
        func token(_ app: (bundleID: String, keyID: String, teamID: String)) -> String {
            #"{"bundle-id":"\#(app.bundleID)","key-file":"\#(keys)/\#(app.keyID).p8","key-id":"\#(app.keyID)","team-id":"\#(app.teamID)"}"#
        }
        let certificate = #"{"bundle-id":"\#(Self.certificateApp)","certificate":"\#(enterprise.certificatePath)","private-key":"\#(enterprise.privateKeyPath)"}"#
        configPath = "\(directory)/config.json"
        try #"{"apns":{"apps":[\#(token(Self.knownApp)),\#(token(Self.revokedApp)),\#(certificate)]}}"#
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let mockApps = "\(directory)/mock-apps.json"
        try #"{"apns":{"apps":[\#(token(Self.knownApp)),\#(certificate)]}}"#.write(toFile: mockApps, atomically: true, encoding: .utf8)

        let topics = ["calls", "calls.retry.1s", "calls.dlq", "apns.tokens.invalidated", "calls.outcomes"]
        kafka = try CallpushProcess(["kafka-mock", "--partitions", "2", "--topics", topics.joined(separator: ",")])
        apns = try CallpushProcess([
            "mock-apns", "--apps", mockApps, "--client-ca", authority.certificatePath, "--rate-503", "0.08",
            "--rate-429", "0.04", "--rate-500", "0.02", "--goaway-after", "150", "--latency-ms", "2",
            "--unregistered-tokens", Self.unregisteredToken, "--bad-tokens", Self.badToken,
        ])
    }

    /// Starts `callpush run --config` and waits until it has its partitions.
    func startWorker() async throws {
        let parts = apns.firstLine.split(separator: " ")
        metricsPort = FreePort.next()
        worker = try CallpushProcess([
            "run", "--kafka-brokers", kafka.firstLine, "--kafka-group", "live-dashboard", "--kafka-receipts",
            "--kafka-retry-tiers", "1s", "--kafka-session-timeout", "6", "--apns-endpoint", String(parts.first ?? ""),
            "--apns-ca-file", String(parts.last?.dropFirst(3) ?? ""), "--config", configPath,
            "--metrics-port", String(metricsPort), "--log-level", "warning",
        ], readFirstLine: false)
        let ready = await Eventually.waitUntil(timeout: .seconds(60), interval: .milliseconds(200)) { [metricsPort] in
            let scrape = try? ExternalTool.run(["curl", "-s", "--max-time", "2", "localhost:\(metricsPort)/metrics"])
            return scrape?.output.contains("\ncallpush_ready 1\n") == true
        }
        #expect(ready, "\(worker?.logTail ?? "")")
    }

    /// One record for kcat: key, tab, value.
    private func record(key: String? = nil, callID: String, type: String = "incoming", topic: String = LiveDashboardBed.knownApp.bundleID,
                        push: String = "alert", token: String? = nil, createdAt: Int64, ringTimeout: Int = 60) -> String {
        sequence += 1
        let device = token ?? String(format: "%064x", sequence)
        return "\(key ?? callID)\t{\"event_id\":\"\(UUID().uuidString.lowercased())\",\"type\":\"\(type)\",\"call_id\":\"\(callID)\","
            + "\"device_token\":\"\(device)\",\"push\":\"\(push)\",\"topic\":\"\(topic)\",\"environment\":\"production\","
            + "\"created_at\":\(createdAt),\"ring_timeout_s\":\(ringTimeout)}"
    }

    /// One second's traffic: calls that ring and hang up for every app, VoIP, dead and bad tokens, an unknown app, an
    /// expired call, a call produced with another key, one created ahead of the worker's clock, and a malformed event.
    private func batch(_ second: Int) -> [String] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var lines: [String] = []
        for n in 0..<30 {
            let call = "c-\(second)-\(n)"
            lines.append(record(callID: call, createdAt: now))
            if n % 3 == 0 { lines.append(record(callID: call, type: "hangup", createdAt: now)) }
        }
        for n in 0..<4 { lines.append(record(callID: "e-\(second)-\(n)", topic: Self.certificateApp, createdAt: now)) }
        lines.append(record(callID: "v-\(second)", push: "voip", createdAt: now))
        lines.append(record(callID: "r-\(second)", topic: Self.revokedApp.bundleID, createdAt: now))
        lines.append(record(callID: "u-\(second)", token: Self.unregisteredToken, createdAt: now))
        lines.append(record(callID: "b-\(second)", token: Self.badToken, createdAt: now))
        lines.append(record(callID: "x-\(second)", topic: "com.unknown.app", createdAt: now))
        lines.append(record(callID: "old-\(second)", createdAt: now - 120_000, ringTimeout: 30))
        lines.append(record(key: "not-the-call", callID: "k-\(second)", createdAt: now))
        lines.append(record(callID: "ahead-\(second)", createdAt: now + 30_000))
        lines.append("m-\(second)\t{\"event_id\": ")
        return lines
    }

    /// Produces a batch every second for `seconds`, with a SIGHUP reload of the apps half-way.
    func runTraffic(seconds: Int) async throws {
        for second in 0..<seconds {
            let result = try ExternalTool.run(["kcat", "-b", kafka.firstLine, "-P", "-t", "calls", "-K", "\t"],
                                      input: batch(second).joined(separator: "\n") + "\n")
            #expect(result.status == 0, "\(result.output)")
            if second == seconds / 2, let worker { worker.child.signal(SIGHUP) }
            try await Task.sleep(for: .seconds(1))
        }
    }

    var logTail: String { worker?.logTail ?? "" }

    func stop() {
        worker?.terminate()
        apns.terminate()
        kafka.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
