import Foundation
import Synchronization
import TestSupport
@testable import HTTP2Server
@testable import Runtime
@testable import TLS
import Testing

/// A `TLSTransport` driven on its own (no HTTP/2 session above it) ends with a `TLSError` saying why.
@Suite("TLS transport failures", .serialized)
struct TLSErrorTests {
    let certificates = TestCertificates.shared

    /// Records how a transport closed; closes one that became active (the tests expect none to).
    final class Probe: TLSTransportDelegate, @unchecked Sendable {
        weak var transport: TLSTransport?
        var onClose: ((TLSError) -> Void)?

        func transportDidBecomeActive() { transport?.close(error: TLSError(.connectionClosed, reason: "unexpectedly active")) }
        func transportDidRead(_ bytes: UnsafeRawBufferPointer) -> Bool { true }
        func transportProduceOutput(into buffer: inout [UInt8]) {}
        func transportShouldClose() -> Bool { false }
        func transportDidClose(error: TLSError) { onClose?(error) }
    }

    /// Connects a client transport to 127.0.0.1:`port` with `context` and returns the error it closed with.
    func closeError(port: Int, context: TLSContext, host: String = "127.0.0.1") async throws -> TLSError {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let loop = group.next()
        let address = try #require(try Socket.resolveAll(host: "127.0.0.1", port: port).first)
        let fd = try Socket.connect(to: address)
        let probe = Probe()
        return await withCheckedContinuation { continuation in
            loop.execute {
                probe.onClose = { continuation.resume(returning: $0) }
                do throws(TLSError) {
                    let transport = try TLSTransport(loop: loop, connectingFD: fd, context: context, host: host)
                    probe.transport = transport
                    transport.delegate = probe
                    transport.start()
                } catch {
                    close(fd)
                    continuation.resume(returning: error)
                }
            }
        }
    }

    func server(alpn: [String] = ["h2"], group: EventLoopGroup) throws -> HTTP2Server {
        try HTTP2Server(tls: try certificates.serverContext(alpn: alpn), group: group, handler: echoHandler)
    }

    @Test func aClosedPortIsARetriableConnectFailure() async throws {
        let error = try await closeError(port: FreePort.next(), context: try certificates.clientContext())
        #expect(error.code == .connectFailed, "\(error)")
        #expect(error.isRetriable)
    }

    @Test func aPeerWithAnUntrustedCertificateFailsVerification() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try server(group: group)
        defer { server.stop() }
        let untrusting = try TLSContext(client: TLSClientConfiguration(caFile: certificates.otherCertificateFile))
        let error = try await closeError(port: server.port, context: untrusting)
        #expect(error.code == .certificateVerifyFailed, "\(error)")
        #expect(!error.isRetriable)
    }

    @Test func aCertificateForAnotherNameIsAHostnameMismatch() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try server(group: group)
        defer { server.stop() }
        let error = try await closeError(port: server.port, context: try certificates.clientContext(serverName: "api.push.apple.com"))
        #expect(error.code == .hostnameMismatch, "\(error)")
        #expect(!error.isRetriable)
    }

    @Test func aServerWithoutH2IsAnALPNMismatch() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try server(alpn: ["http/1.1"], group: group)
        defer { server.stop() }
        let error = try await closeError(port: server.port, context: try certificates.clientContext())
        #expect(error.code == .alpnMismatch, "\(error)")
        #expect(!error.isRetriable)
    }

    @Test func aMissingCAFileIsAConfigurationError() {
        let missing = certificates.directory + "/missing-ca.pem"
        #expect {
            _ = try TLSContext(client: TLSClientConfiguration(caFile: missing))
        } throws: { error in
            guard let error = error as? TLSError else { return false }
            return error.code == .configuration && !error.isRetriable && error.reason.contains("cannot be read")
        }
    }
}
