@testable import APNs
@testable import APNsMock
@testable import Crypto
import Foundation
import Synchronization
@testable import HTTP2
@testable import Telemetry
import TestSupport
import Testing

/// Pool behaviour against the mock: GOAWAY storms, the 1→1000 stream limit, drops, stalls, a fault mix, routing,
/// certificate auth and metrics.
@Suite(.serialized, .timeLimit(.minutes(1))) struct APNsClientPoolTests {
    typealias Fixture = APNsClientFixture

    static func requests(_ count: Int) throws -> [APNsRequest] {
        try (0..<count).map { try Fixture.alert(token: Fixture.deviceToken($0 + 1)) }
    }

    @Test func goAwayStormReplacesConnectionsAndAnswersEverything() async throws {
        // Every connection ends with GOAWAY after 200 streams; streams above its last-stream-id come back unprocessed
        // and are re-sent on the replacement connections.
        let fixture = try Fixture(
            connections: 2, requestTimeout: .seconds(30),
            faults: APNsMockFaults(latency: .milliseconds(2), goAwayAfterStreams: 200), maximumTransparentResends: 1000)
        defer { fixture.shutdown() }
        let results = try await fixture.sendAll(try Self.requests(2000), timeout: .seconds(40))
        #expect(results.count == 2000)
        var byReason: [String: Int] = [:]
        for result in results { byReason[result.reason ?? "Success", default: 0] += 1 }
        // Streams above GOAWAY's last-stream-id are re-sent, so every push is delivered. (The server lingers after its
        // GOAWAY until the client closes, so the client always reads the GOAWAY before the connection ends.)
        #expect(results.allSatisfy { $0.disposition == .delivered }, "\(byReason)")
        // Each connection processes at most 200 streams, so the successes needed that many connections.
        let stats = fixture.server.connectionStats()
        #expect(stats.allSatisfy { $0.requests <= 200 }, "\(stats)")
        #expect(stats.count * 200 >= byReason["Success", default: 0])
        #expect(fixture.eventCount("goaway") + fixture.eventCount("failed") >= 2)
        #expect(fixture.eventCount("opened") >= Double(fixture.server.acceptedConnections))
    }

    /// A connection that answered pushes is no failed connect however soon the server ends it: a busy connection
    /// reaches a GOAWAY-after-N within a fraction of a second, and its replacement must open at once. With the
    /// production back-off (1 s, doubling), counting each such end as a failed connect made the pool wait longer and
    /// longer with nothing open, and pushes queued behind it timed out.
    @Test func aConnectionThatAnsweredIsNoFailedConnectHoweverShortItsLife() async throws {
        let fixture = try Fixture(
            connections: 1, requestTimeout: .seconds(10),
            faults: APNsMockFaults(latency: .milliseconds(1), goAwayAfterStreams: 100), maximumTransparentResends: 1000,
            reconnectBackoff: (.seconds(1), .seconds(60)))
        defer { fixture.shutdown() }
        let results = try await fixture.sendAll(try Self.requests(1500), timeout: .seconds(60))
        var byReason: [String: Int] = [:]
        for result in results { byReason[result.reason ?? "Success", default: 0] += 1 }
        #expect(results.allSatisfy { $0.disposition == .delivered }, "\(byReason)")
        #expect(fixture.server.acceptedConnections >= 15, "every connection served at most 100 pushes")
        #expect(fixture.eventCount("failed") == 0)
    }

    /// Connections that start 201 streams before their retirement id: each retires after 201 pushes (GOAWAY of its
    /// own, queued pushes handed back and re-sent on its replacement), and every push is delivered.
    @Test func connectionsRetireBeforeTheirStreamIDsRunOutAndEverythingIsDelivered() async throws {
        let retirement = HTTP2ClientConfiguration().retirementStreamID
        let fixture = try Fixture(
            connections: 2, requestTimeout: .seconds(30), faults: APNsMockFaults(latency: .milliseconds(1)),
            maximumTransparentResends: 1000, firstStreamID: retirement - 400)
        defer { fixture.shutdown() }
        let results = try await fixture.sendAll(try Self.requests(2000), timeout: .seconds(40))
        var byReason: [String: Int] = [:]
        for result in results { byReason[result.reason ?? "Success", default: 0] += 1 }
        #expect(results.count == 2000 && results.allSatisfy { $0.disposition == .delivered }, "\(byReason)")
        let stats = fixture.server.connectionStats()
        #expect(stats.allSatisfy { $0.requests <= 201 }, "\(stats)")
        #expect(stats.count >= 10)
    }

    @Test func goAwayWithoutLatencyRefusesTheRestAndEverythingIsDelivered() async throws {
        // No latency: the GOAWAY decision and the streams after it arrive in the same read. The mock refuses those
        // streams (REFUSED_STREAM) as APNs would not process them, and the client re-sends them.
        let fixture = try Fixture(
            connections: 2, requestTimeout: .seconds(30), faults: APNsMockFaults(goAwayAfterStreams: 300),
            maximumTransparentResends: 1000)
        defer { fixture.shutdown() }
        let results = try await fixture.sendAll(try Self.requests(2000), timeout: .seconds(40))
        var byReason: [String: Int] = [:]
        for result in results { byReason[result.reason ?? "Success", default: 0] += 1 }
        #expect(results.allSatisfy { $0.disposition == .delivered }, "\(byReason)")
        let stats = fixture.server.connectionStats()
        #expect(stats.count >= 4)
        #expect(stats.allSatisfy { $0.requests <= 300 }, "\(stats)")
    }

    @Test func firstRequestGoesAloneThenConcurrencyRises() async throws {
        // A server that would allow 1000 streams at once: the client itself must send one until authenticated.
        let fixture = try Fixture(faults: APNsMockFaults(latency: .milliseconds(20)), unauthenticatedLimit: 1000)
        defer { fixture.shutdown() }
        let results = try await fixture.sendAll(try Self.requests(300))
        #expect(results.allSatisfy { $0.disposition == .delivered })
        let stats = try #require(fixture.server.connectionStats().first)
        #expect(stats.maxConcurrentStreamsBeforeAuthentication == 1)
        #expect(stats.maxConcurrentStreams > 50, "after authentication the pushes are multiplexed, not sent one at a time")
    }

    @Test func serverLimitOfOneIsRaisedAfterTheFirstValidToken() async throws {
        let fixture = try Fixture(faults: APNsMockFaults(latency: .milliseconds(10)))
        defer { fixture.shutdown() }
        let results = try await fixture.sendAll(try Self.requests(200))
        #expect(results.allSatisfy { $0.disposition == .delivered })
        #expect(fixture.client.poolStatus(for: .production).streamLimits == [1000])
        let stats = try #require(fixture.server.connectionStats().first)
        #expect(stats.maxConcurrentStreamsBeforeAuthentication == 1)
        #expect(stats.maxConcurrentStreams > 10)
        let exposition = fixture.registry.exposition()
        #expect(exposition.contains(#"callpush_apns_stream_limit{connection="0",endpoint="127.0.0.1:\#(fixture.server.port)"} 1000"#))
    }

    @Test func droppedConnectionsAreAnsweredAndReplaced() async throws {
        let fixture = try Fixture(connections: 2, faults: APNsMockFaults(dropConnectionProbability: 0.02))
        defer { fixture.shutdown() }
        let results = try await fixture.sendAll(try Self.requests(1000))
        #expect(results.allSatisfy { $0.disposition == .delivered || $0.reason == "ConnectionLost" || $0.reason == "NotProcessed" })
        #expect(results.contains { $0.reason == "ConnectionLost" })
        #expect(fixture.eventCount("failed") >= 1)
        fixture.server.setFaults(.none)
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
    }

    @Test func stalledStreamTimesOutAndTheConnectionIsReplaced() async throws {
        let fixture = try Fixture(requestTimeout: .milliseconds(400), faults: APNsMockFaults(stallProbability: 1))
        defer { fixture.shutdown() }
        // The mock never answers: the push comes back as the client's own timeout, not an answer.
        let stalled = await fixture.send(try Fixture.alert())
        #expect(stalled.reason == "Timeout")
        #expect(stalled.status == nil)
        #expect(stalled.disposition == .retryLater)
        fixture.server.setFaults(.none)
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
        #expect(fixture.eventCount("replaced") >= 1)
        #expect(fixture.server.acceptedConnections == 2)
    }

    @Test func noRequestIsLeftWithoutAnAnswerUnderAFaultMix() async throws {
        let fixture = try Fixture(
            connections: 3, requestTimeout: .seconds(2),
            faults: APNsMockFaults(
                tooManyRequestsProbability: 0.02, internalServerErrorProbability: 0.03,
                serviceUnavailableProbability: 0.03, latencyJitter: .milliseconds(5), goAwayAfterStreams: 500,
                dropConnectionProbability: 0.0005, stallProbability: 0.001))
        defer { fixture.shutdown() }
        let results = try await fixture.sendAll(try Self.requests(4000), timeout: .seconds(40))
        #expect(results.count == 4000)
        var byReason: [String: Int] = [:]
        for result in results { byReason[result.reason ?? "Success", default: 0] += 1 }
        #expect(byReason["Success", default: 0] > 0, "\(byReason) \(fixture.server.recorder.countsByOutcome)")
        #expect(byReason["InternalServerError", default: 0] + byReason["ServiceUnavailable", default: 0] > 0)
        #expect(results.allSatisfy { $0.disposition == .delivered || $0.disposition == .retryLater }, "\(byReason)")
        let answered = ExpositionSeries.sum("callpush_apns_requests_total", in: fixture.registry.exposition())
        #expect(answered == 4000)
    }

    @Test func routesByEnvironment() async throws {
        let production = try APNsMockServer()
        let sandbox = try APNsMockServer()
        defer {
            production.stop()
            sandbox.stop()
        }
        let client = try APNsClient(configuration: APNsClientConfiguration(
            credentials: .certificate(certificatePath: production.certificatePath,
                                      privateKeyPath: production.privateKeyPath),
            productionEndpoint: production.endpoint, sandboxEndpoint: sandbox.endpoint))
        defer { client.shutdown() }
        #expect(await client.send(try Fixture.alert(), environment: .sandbox).disposition == .delivered)
        #expect(await client.send(try Fixture.alert(), environment: .sandbox).disposition == .delivered)
        #expect(await client.send(try Fixture.alert(), environment: .production).disposition == .delivered)
        #expect(sandbox.recorder.totalCount == 2)
        #expect(production.recorder.totalCount == 1)
    }

    @Test func certificateAuthenticationWithAClientCertificate() async throws {
        let directory = NSTemporaryDirectory() + "callpush-client-cert-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clientCertificate = try SelfSignedCertificate.generate(commonName: "Apple Push Services: com.example.app")
        let files = try clientCertificate.write(toDirectory: directory)
        let server = try APNsMockServer(configuration: APNsMockServerConfiguration(
            clientCAFile: files.certificatePath,
            apns: APNsMockConfiguration(authentication: .certificate, allowedBundleIDs: [Fixture.bundleID])))
        defer { server.stop() }
        let client = try APNsClient(configuration: APNsClientConfiguration(
            credentials: .certificate(certificatePath: files.certificatePath, privateKeyPath: files.privateKeyPath),
            customEndpoint: server.endpoint))
        defer { client.shutdown() }
        let results = try await withThrowingTaskGroup(of: APNsResult.self) { group in
            for index in 0..<50 {
                group.addTask { await client.send(try Fixture.alert(token: Fixture.deviceToken(index + 1))) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0.disposition == .delivered })
        #expect(server.recorder.entries.allSatisfy { entry in !entry.headers.contains { $0.name == "authorization" } })

        // The same certificate from a PKCS12 archive exported the legacy way (RC2-40 / 3DES, as OpenSSL 1.1 and macOS
        // do): read through OpenSSL 3's legacy provider, and its key handed to TLS from memory, never to a file.
        let p12 = directory + "/legacy.p12"
        let export = try ChildProcess.run([
            "openssl", "pkcs12", "-export", "-legacy", "-in", files.certificatePath, "-inkey", files.privateKeyPath,
            "-out", p12, "-passout", "pass:pw",
        ])
        #expect(export.status == 0, "\(export.stderr)")
        let temporary = Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()))
        let archived = try APNsClient(configuration: APNsClientConfiguration(
            credentials: .certificate(pkcs12Path: p12, password: "pw"), customEndpoint: server.endpoint))
        defer { archived.shutdown() }
        #expect(await archived.send(try Fixture.alert()).disposition == .delivered)
        let written = Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())).subtracting(temporary)
        // The client's key files were named callpush-apns-<UUID>; the mock servers other tests start meanwhile make
        // callpush-apns-mock-<UUID> directories for their own certificates.
        #expect(!written.contains { $0.hasPrefix("callpush-apns-") && !$0.hasPrefix("callpush-apns-mock-") }, "\(written)")

        // Without a client certificate the handshake fails; the push is still answered.
        let anonymous = try APNsClient(configuration: APNsClientConfiguration(
            credentials: .token(keyPEM: try ES256PrivateKey.generate().pemRepresentation(), keyID: Fixture.keyID,
                                teamID: Fixture.teamID),
            customEndpoint: server.endpoint, requestTimeout: .milliseconds(500)))
        defer { anonymous.shutdown() }
        let refused = await anonymous.send(try Fixture.alert())
        #expect(refused.disposition == .retryLater)
        #expect(refused.status == nil)
    }

    @Test func maximumConnectionAgeReplacesGracefully() async throws {
        let server = try APNsMockServer()
        defer { server.stop() }
        let registry = MetricsRegistry()
        let client = try APNsClient(
            configuration: APNsClientConfiguration(
                credentials: .certificate(certificatePath: server.certificatePath,
                                          privateKeyPath: server.privateKeyPath),
                customEndpoint: server.endpoint, maximumConnectionAge: .milliseconds(200)),
            metrics: registry)
        defer { client.shutdown() }
        #expect(await client.send(try Fixture.alert()).disposition == .delivered)
        try await Task.sleep(for: .milliseconds(400))  // past the 200 ms maximum connection age
        #expect(await client.send(try Fixture.alert()).disposition == .delivered)
        #expect(server.acceptedConnections >= 2)
        let replaced = registry.counter(APNsClientMetrics.connectionEvents, help: "",
                                        labels: ["endpoint": server.endpoint.description, "event": "replaced"]).value
        #expect(replaced >= 1)
    }
}
