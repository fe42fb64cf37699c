import Foundation
import TestSupport
@testable import Runtime
@testable import TLS
@testable import HTTP2
@testable import HTTP2Server
import Testing

@Suite("HTTP2 TLS failures, PING, and interop with nghttp2 tools", .serialized)
struct HTTP2TLSAndInteropTests {
    let certificates = TestCertificates.shared

    private func connectError(port: Int, host: String = "127.0.0.1", tls: TLSContext) async -> HTTP2Error? {
        let group = try! EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        var configuration = HTTP2ClientConfiguration()
        configuration.connectTimeout = .seconds(5)
        do {
            let connection = try await HTTP2ClientConnection.connect(
                host: host, port: port, tls: tls, configuration: configuration, on: group.next())
            connection.close()
            return nil
        } catch {
            return error
        }
    }

    @Test func untrustedCertificateIsRejected() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: echoHandler)
        defer { server.stop() }
        let untrusting = try TLSContext(client: TLSClientConfiguration(caFile: certificates.otherCertificateFile))
        let error = await connectError(port: server.port, tls: untrusting)
        #expect(error?.code == .certificateVerifyFailed)
        #expect(error?.reason.contains("self-signed") == true || error?.reason.contains("verify") == true)
    }

    @Test func wrongHostnameIsRejected() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: echoHandler)
        defer { server.stop() }
        let error = await connectError(port: server.port, tls: try certificates.clientContext(serverName: "api.push.apple.com"))
        #expect(error?.code == .hostnameMismatch)
        // The right name (SNI + verification) works.
        #expect(await connectError(port: server.port, tls: try certificates.clientContext(serverName: "localhost")) == nil)
    }

    @Test func serverWithoutH2IsRejected() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(alpn: ["http/1.1"]), group: group,
                                     handler: echoHandler)
        defer { server.stop() }
        let error = await connectError(port: server.port, tls: try certificates.clientContext())
        #expect(error?.code == .alpnMismatch)
    }

    @Test func connectionRefusedIsReported() async throws {
        let error = await connectError(port: FreePort.next(), tls: try certificates.clientContext())
        #expect(error?.code == .connectFailed)
    }

    @Test func pingMeasuresRoundTripAndTimeoutDetectsDeadPeer() async throws {
        guard let (nghttpd, port) = try certificates.startNghttpd() else {
            Issue.record("nghttpd did not start")
            return
        }
        defer { nghttpd.kill() }
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: port, tls: try certificates.clientContext(), on: group.next())
        let rtt = try await withTimeout(5) {
            try await withCheckedThrowingContinuation { continuation in
                connection.ping(timeout: .seconds(2)) { continuation.resume(with: $0) }
            }
        }
        #expect(rtt < .seconds(1))
        let collector = ResultCollector(expected: 1)
        nghttpd.signal(SIGSTOP)  // the peer stops answering but TCP stays up
        connection.submit(testRequest(port)) { collector.add($0) }
        let pingResult = try await withTimeout(5) {
            await withCheckedContinuation { continuation in
                connection.ping(timeout: .milliseconds(300)) { continuation.resume(returning: $0) }
            }
        }
        guard case .failure(let error) = pingResult else { Issue.record("ping should fail"); return }
        #expect(error.code == .pingTimeout)
        #expect(await Eventually.waitUntil(timeout: .seconds(2)) { connection.state == .closed })
        let pending = try #require(collector.wait(seconds: 2))
        guard case .failure(let requestError) = pending[0] else { Issue.record("request should fail"); return }
        #expect(requestError.code == .pingTimeout)
    }

    @Test func clientTalksToNghttpd() async throws {
        guard let (nghttpd, port) = try certificates.startNghttpd(extra: ["--echo-upload"]) else {
            Issue.record("nghttpd did not start")
            return
        }
        defer { nghttpd.kill() }
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "localhost", port: port, tls: try certificates.clientContext(), on: group.next())
        let get = try await connection.send(HTTP2Request(method: "GET", path: "/index.html", authority: "localhost"),
                                            deadline: .after(.seconds(5)))
        #expect(get.status == 200)
        #expect(get.body == Array("hello".utf8))
        let collector = ResultCollector(expected: 500)
        for i in 0..<500 {
            connection.submit(testRequest(port, id: i), deadline: .after(.seconds(10))) { collector.add($0) }
        }
        let results = try #require(collector.wait(seconds: 15))
        #expect(results.allSatisfy { (try? $0.get().status) == 200 })
        #expect(results.allSatisfy { (try? $0.get().body) == Array("{\"aps\":{}}".utf8) })
        connection.close()
    }

    @Test func h2loadAndNghttpTalkToOurServer() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: echoHandler)
        defer { server.stop() }
        let url = "https://127.0.0.1:\(server.port)/3/device/abc"
        let (status, output) = try ExternalTool.run(["h2load", "-n", "5000", "-c", "2", "-m", "50", url], timeout: 30)
        #expect(status == 0)
        #expect(output.contains("5000 succeeded"), "\(output)")
        let (nghttpStatus, nghttpOutput) = try ExternalTool.run(["nghttp", "-v", url], timeout: 10)
        #expect(nghttpStatus == 0)
        #expect(nghttpOutput.contains(":status: 200"), "\(nghttpOutput)")
    }
}
