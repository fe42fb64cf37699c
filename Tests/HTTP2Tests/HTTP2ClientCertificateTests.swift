import Foundation
@testable import Crypto
@testable import Runtime
@testable import TLS
@testable import HTTP2
@testable import HTTP2Server
import Synchronization
import TestSupport
import Testing

/// Client certificates on the server side, over real TLS on 127.0.0.1: required (a client CA alone) or optional
/// (a client CA with `clientCertificateOptional`), and the verified certificate's fingerprint as the connection
/// reports it to the request handler. Certificates are made by the `openssl` CLI, fingerprints checked against it.
@Suite("HTTP2 server client certificates", .serialized)
final class HTTP2ClientCertificateTests {
    let certificates = TestCertificates.shared
    let directory = NSTemporaryDirectory() + "http2-client-certs-\(UUID().uuidString.prefix(8))"
    /// The CA the server trusts, and a client certificate it signed.
    let authority: TestCertificateAuthority
    let client: (certificatePath: String, privateKeyPath: String)
    /// A CA the server does not trust, and a client certificate it signed.
    let stranger: (certificatePath: String, privateKeyPath: String)

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        authority = try TestCertificateAuthority(directory: directory, name: "trusted")
        client = try authority.issueClientCertificate("client", commonName: "Apple Push Services: com.example.enterprise")
        stranger = try TestCertificateAuthority(directory: directory, name: "untrusted")
            .issueClientCertificate("stranger", commonName: "Apple Push Services: com.example.enterprise")
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Answers 200 with the connection's verified client certificate in `x-client-certificate` ("none" without one),
    /// and counts the requests it saw.
    final class Probe: Sendable {
        let requests = Atomic<Int>(0)

        func handle(_ request: HTTP2ServerRequest, _ responder: HTTP2ServerResponder) {
            requests.add(1, ordering: .relaxed)
            let fingerprint = request.connection.clientCertificate?.sha256 ?? "none"
            responder.respond(status: 200, headers: [HTTP2Header("x-client-certificate", fingerprint)], body: [])
        }
    }

    func server(optional: Bool, group: EventLoopGroup, probe: Probe) throws -> HTTP2Server {
        var tls = TLSServerConfiguration(
            certificateFile: certificates.certificateFile, privateKeyFile: certificates.keyFile,
            clientCAFile: authority.certificatePath)
        tls.clientCertificateOptional = optional
        return try HTTP2Server(tls: try TLSContext(server: tls), group: group) { probe.handle($0, $1) }
    }

    /// One request from a client presenting `identity` (nil: no certificate): the response, or the error.
    func request(
        _ port: Int, identity: (certificatePath: String, privateKeyPath: String)?, group: EventLoopGroup
    ) async -> Result<HTTP2Response, HTTP2Error> {
        do throws(HTTP2Error) {
            let tls: TLSContext
            do throws(TLSError) {
                tls = try TLSContext(client: TLSClientConfiguration(
                    caFile: certificates.certificateFile, certificateFile: identity?.certificatePath,
                    privateKeyFile: identity?.privateKeyPath))
            } catch { throw HTTP2Error(error) }
            var configuration = HTTP2ClientConfiguration()
            configuration.connectTimeout = .seconds(5)
            let connection = try await HTTP2ClientConnection.connect(
                host: "127.0.0.1", port: port, tls: tls, configuration: configuration, on: group.next())
            defer { connection.close() }
            return .success(try await connection.send(testRequest(port), deadline: .after(.seconds(5))))
        } catch {
            return .failure(error)
        }
    }

    @Test func anOptionalClientCertificateIsVerifiedWhenPresentedAndReportedPerConnection() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let probe = Probe()
        let server = try server(optional: true, group: group, probe: probe)
        defer { server.stop() }

        let anonymous = try await request(server.port, identity: nil, group: group).get()
        #expect(anonymous.status == 200)
        #expect(anonymous.headers.first(name: "x-client-certificate") == "none", "a client without one still connects")

        let verified = try await request(server.port, identity: client, group: group).get()
        #expect(verified.status == 200)
        let expected = try TestCertificateAuthority.fingerprint(ofCertificate: client.certificatePath)
        #expect(verified.headers.first(name: "x-client-certificate") == expected)

        // A certificate the CA did not sign is refused by the TLS layer: no request reaches the handler.
        let before = probe.requests.load(ordering: .relaxed)
        let refused = await request(server.port, identity: stranger, group: group)
        #expect(throws: HTTP2Error.self) { try refused.get() }
        #expect(probe.requests.load(ordering: .relaxed) == before)
    }

    /// A client with a certificate that resumes its TLS session (OpenSSL's `s_client -reconnect`, TLS 1.2 session
    /// ids) gets back in: OpenSSL refuses to resume a session that may carry a client certificate unless the
    /// server set a session id context.
    @Test func aClientWithACertificateResumesItsSession() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try server(optional: true, group: group, probe: Probe())
        defer { server.stop() }
        let result = try ChildProcess.run(
            ["openssl", "s_client", "-connect", "127.0.0.1:\(server.port)", "-tls1_2", "-alpn", "h2",
             "-cert", client.certificatePath, "-key", client.privateKeyPath, "-reconnect"],
            timeoutSeconds: 20)
        let handshakes = result.output.split(separator: "\n").filter { $0.hasPrefix("New, ") || $0.hasPrefix("Reused, ") }
        #expect(handshakes.count == 6, "\(result.output)")
        #expect(handshakes.dropFirst().allSatisfy { $0.hasPrefix("Reused, ") }, "\(handshakes)")
    }

    @Test func aClientCAAloneRequiresACertificate() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let probe = Probe()
        let server = try server(optional: false, group: group, probe: probe)
        defer { server.stop() }

        let anonymous = await request(server.port, identity: nil, group: group)
        #expect(throws: HTTP2Error.self) { try anonymous.get() }
        let stranger = await request(server.port, identity: stranger, group: group)
        #expect(throws: HTTP2Error.self) { try stranger.get() }
        #expect(probe.requests.load(ordering: .relaxed) == 0)

        let verified = try await request(server.port, identity: client, group: group).get()
        let expected = try TestCertificateAuthority.fingerprint(ofCertificate: client.certificatePath)
        #expect(verified.headers.first(name: "x-client-certificate") == expected)
    }
}
