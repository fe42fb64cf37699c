import Synchronization
import Foundation
import TestSupport
@testable import TLS
@testable import HTTP2
@testable import HTTP2Server

/// A self-signed P-256 certificate for `localhost` / 127.0.0.1, generated once per test process with the
/// `openssl` CLI into a temporary directory removed when the process exits.
struct TestCertificates: Sendable {
    let directory: String
    let certificateFile: String
    let keyFile: String
    /// A second, unrelated self-signed certificate (untrusted by clients that trust only `certificateFile`).
    let otherCertificateFile: String
    let otherKeyFile: String
    /// A certificate for `wrong.example` only.
    let wrongNameCertificateFile: String
    let wrongNameKeyFile: String

    static let shared: TestCertificates = {
        let directory = (try? TemporaryDirectory.makeForProcess(prefix: "http2tests")) ?? NSTemporaryDirectory()
        func make(_ name: String, _ subject: String, _ san: String) {
            _ = try? ChildProcess.run([
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "\(directory)/\(name).key", "-out", "\(directory)/\(name).crt", "-days", "2",
                "-subj", subject, "-addext", "subjectAltName=\(san)",
            ], timeoutSeconds: 30)
        }
        make("server", "/CN=localhost", "DNS:localhost,IP:127.0.0.1")
        make("other", "/CN=localhost", "DNS:localhost,IP:127.0.0.1")
        make("wrong", "/CN=wrong.example", "DNS:wrong.example")
        return TestCertificates(
            directory: directory,
            certificateFile: "\(directory)/server.crt", keyFile: "\(directory)/server.key",
            otherCertificateFile: "\(directory)/other.crt", otherKeyFile: "\(directory)/other.key",
            wrongNameCertificateFile: "\(directory)/wrong.crt", wrongNameKeyFile: "\(directory)/wrong.key")
    }()

    func serverContext(alpn: [String] = ["h2"]) throws -> TLSContext {
        try TLSContext(server: TLSServerConfiguration(certificateFile: certificateFile, privateKeyFile: keyFile,
                                                      alpnProtocols: alpn))
    }

    func clientContext(serverName: String? = nil) throws -> TLSContext {
        try TLSContext(client: TLSClientConfiguration(caFile: certificateFile, serverName: serverName))
    }
}

/// Runs `body` with a timeout; throws `TestTimeout` if it does not finish in time (without waiting for `body`).
func withTimeout<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let once = ResumeOnce<T>()
    return try await withCheckedThrowingContinuation { continuation in
        once.set(continuation)
        Task {
            do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) }
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            once.resume(.failure(TestTimeout()))
        }
    }
}

final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)
    func set(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }
    func resume(_ result: Result<T, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}

struct TestTimeout: Error {}

/// Collects results from completions running on loop threads.
final class ResultCollector: Sendable {
    private let results = Mutex<[Result<HTTP2Response, HTTP2Error>]>([])
    private let expected: Int
    private let done = DispatchSemaphore(value: 0)

    init(expected: Int) { self.expected = expected }

    func add(_ result: Result<HTTP2Response, HTTP2Error>) {
        let finished = results.withLock { results in
            results.append(result)
            return results.count == expected
        }
        if finished { done.signal() }
    }

    /// Waits (bounded) for all results.
    func wait(seconds: Double) -> [Result<HTTP2Response, HTTP2Error>]? {
        if done.wait(timeout: .now() + seconds) == .timedOut { return nil }
        return results.withLock { $0 }
    }

    var count: Int { results.withLock { $0.count } }
}

/// Holds responders so a test can answer later.
final class HeldResponders: Sendable {
    private let items = Mutex<[(Int32, HTTP2ServerResponder)]>([])
    func add(_ streamID: Int32, _ responder: HTTP2ServerResponder) {
        items.withLock { $0.append((streamID, responder)) }
    }
    var count: Int { items.withLock { $0.count } }
    func takeAll() -> [(Int32, HTTP2ServerResponder)] {
        items.withLock { items in
            defer { items = [] }
            return items
        }
    }
}

func echoHandler(_ request: HTTP2ServerRequest, _ responder: HTTP2ServerResponder) {
    responder.respond(status: 200, headers: [HTTP2Header("apns-id", request.headers.first(name: "apns-id") ?? "")],
                      body: request.body)
}

func testRequest(_ port: Int, id: Int = 0) -> HTTP2Request {
    HTTP2Request(path: "/3/device/abc\(id)", authority: "localhost:\(port)",
                 headers: [HTTP2Header("apns-id", "id-\(id)", neverIndex: true), HTTP2Header("apns-topic", "t")],
                 body: Array("{\"aps\":{}}".utf8))
}
