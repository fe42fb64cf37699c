import Glibc
@testable import HTTP2
@testable import HTTP2Server
@testable import Runtime
import Testing

/// The runtime's sockets fail with `SocketError`; the HTTP/2 server reports the same failure as `HTTP2Error`.
@Suite struct SocketErrorTests {
    @Test func listeningOnAPortInUseIsABindFailureThatRetryingDoesNotFix() throws {
        let first = try Socket.listen(host: "127.0.0.1", port: 0, backlog: 4)
        defer { close(first.fd) }
        #expect {
            _ = try Socket.listen(host: "127.0.0.1", port: first.port, backlog: 4)
        } throws: { error in
            guard let error = error as? SocketError else { return false }
            return error.code == .bindFailed && !error.isRetriable && error.reason.contains("127.0.0.1:\(first.port)")
        }
    }

    @Test func aSocketThatCannotBeCreatedIsARetriableConnectFailure() {
        // An address of no family: socket(2) refuses it (EAFNOSUPPORT) before any packet is sent.
        #expect {
            _ = try Socket.connect(to: SocketAddress())
        } throws: { error in
            guard let error = error as? SocketError else { return false }
            return error.code == .connectFailed && error.isRetriable && error.reason.hasPrefix("socket:")
        }
    }

    @Test func theServerReportsAPortInUseAsHTTP2BindFailed() throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let first = try Socket.listen(host: "127.0.0.1", port: 0, backlog: 4)
        defer { close(first.fd) }
        let tls = try TestCertificates.shared.serverContext()
        #expect {
            _ = try HTTP2Server(configuration: HTTP2ServerConfiguration(port: first.port), tls: tls, group: group,
                                handler: echoHandler)
        } throws: { error in
            (error as? HTTP2Error)?.code == .bindFailed
        }
    }
}
