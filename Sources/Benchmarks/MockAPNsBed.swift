import APNs
import Crypto
import Foundation
import ToolSupport

/// What the `mock` and `peers` areas share: a fresh .p8 key with its JWT, the ~90-byte incoming-call alert as a
/// file, an nghttpd document root that answers the push path with 200, and `callpush mock-apns` (the binary next
/// to callpush-bench) started on a free port with that key.
struct MockAPNsBed {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    static let topic = "com.example.app"
    static let deviceToken = String(repeating: "ab", count: 32)
    static let path = "/3/device/" + deviceToken
    /// 91 bytes: an incoming-call alert that runs the Notification Service Extension.
    static let payload = #"{"aps":{"alert":{"title":"Alice","body":"Incoming call"},"mutable-content":1},"pushType":1}"#

    let certificate: BenchCertificate
    let keyPath: String
    let bodyPath: String
    /// An nghttpd document root holding an empty file at ``path``.
    let documentRoot: String
    /// `authorization: bearer <JWT>` signed with the key.
    let authorization: String
    let callpushPath: String

    /// The h2load `-H` arguments of a valid, JWT-authenticated APNs alert request.
    var h2loadHeaders: [String] {
        ["authorization: \(authorization)", "apns-topic: \(Self.topic)", "apns-push-type: alert", "apns-priority: 10",
         "content-type: application/json"]
    }

    /// - Throws: ``BenchFailure`` when the callpush binary is missing or a file cannot be written.
    static func make() throws -> MockAPNsBed {
        let callpush = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("callpush").path
        guard FileManager.default.isExecutableFile(atPath: callpush) else {
            throw BenchFailure("\(callpush) is missing: build it first (swift build -c release --product callpush)")
        }
        let certificate = try BenchCertificate.make()
        let key = try ES256PrivateKey.generate()
        let keyPath = certificate.directory + "/AuthKey.p8"
        try Data(key.pemRepresentation().utf8).write(to: URL(fileURLWithPath: keyPath))
        let bodyPath = certificate.directory + "/alert.json"
        try Data(payload.utf8).write(to: URL(fileURLWithPath: bodyPath))
        let documentRoot = certificate.directory + "/apns-www"
        try FileManager.default.createDirectory(atPath: documentRoot + "/3/device", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: documentRoot + path, contents: Data())
        let token = try JWTSigner(privateKey: key, keyID: keyID, teamID: teamID)
            .makeToken(issuedAt: Int64(Date().timeIntervalSince1970))
        return MockAPNsBed(certificate: certificate, keyPath: keyPath, bodyPath: bodyPath, documentRoot: documentRoot,
                           authorization: token.authorizationValue, callpushPath: callpush)
    }

    /// Starts `callpush mock-apns` in token mode with the key (plus `extra` options) on a free port.
    /// - Throws: ``BenchFailure`` when it does not come up.
    func startMock(_ extra: [String] = []) throws(BenchFailure) -> (process: ChildProcess, port: Int) {
        let port = FreePort.next()
        let process = try BenchFailure.starting(
            ChildProcess([
                "mock-apns", "--port", String(port), "--key-file", keyPath, "--key-id", Self.keyID, "--team-id", Self.teamID,
                "--bundle-id", Self.topic,
            ] + extra, executable: callpushPath, output: .discard, errors: .discard))
        guard FreePort.waitUntilListening(port) else {
            process.terminate(grace: .seconds(1))
            throw BenchFailure("callpush mock-apns did not start on port \(port)")
        }
        return (process, port)
    }

    /// Starts `callpush kafka-mock` with `partitions` per topic and `topics`, and waits (up to 10 s) for the bootstrap
    /// servers it prints first.
    /// - Throws: ``BenchFailure`` when it does not start or print them.
    func startKafkaMock(partitions: Int, topics: [String]) throws(BenchFailure) -> (process: ChildProcess, brokers: String) {
        let process = try BenchFailure.starting(
            ChildProcess(["kafka-mock", "--partitions", String(partitions), "--topics", topics.joined(separator: ",")],
                         executable: callpushPath, output: .pipe, errors: .log))
        guard let brokers = process.readLine(timeout: .seconds(10)) else {
            process.terminate(grace: .seconds(1))
            throw BenchFailure("callpush kafka-mock printed nothing: \(process.log.suffix(300))")
        }
        return (process, brokers)
    }

    func remove() { certificate.remove() }
}
