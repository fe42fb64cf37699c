import BenchSupport
@testable import Runtime
@testable import TLS
@testable import HTTP2
@testable import HTTP2Server
import Synchronization
import Testing

/// The load generator the benchmarks measure the HTTP/2 client with: what it sends, counted by a server.
@Suite("HTTP2 load generator")
struct HTTP2LoadGeneratorTests {
    let certificates = TestCertificates.shared

    /// With variants, each connection sends them in turn (the `worker` bench area's client part with the worker's
    /// requests); without, the one request every time.
    @Test(arguments: [0, 3])
    func sendsItsVariantsInTurn(variantCount: Int) async throws {
        let paths = Mutex<[String: Int]>([:])
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group) { request, responder in
            paths.withLock { $0[request.path, default: 0] += 1 }
            responder.respond(status: 200, headers: [], body: [])
        }
        defer { server.stop() }
        var configuration = HTTP2LoadGenerator.Configuration(
            port: server.port, tls: TLSClientConfiguration(caFile: certificates.certificateFile), connections: 1,
            streamsPerConnection: 4, totalRequests: 10)
        configuration.variants = (0..<variantCount).map { HTTP2Request(path: "/v/\($0)", authority: "127.0.0.1") }
        let report = try await HTTP2LoadGenerator(configuration: configuration).run()
        #expect(report.succeeded == 10 && report.statuses == [200: 10])
        let expected = variantCount == 0 ? [configuration.request.path: 10] : ["/v/0": 4, "/v/1": 3, "/v/2": 3]
        #expect(paths.withLock { $0 } == expected)
    }
}
