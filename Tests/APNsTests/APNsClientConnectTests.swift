@testable import APNs
@testable import APNsMock
import Foundation
@testable import Telemetry
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(1))) struct APNsClientConnectTests {
    typealias Fixture = APNsClientFixture

    @Test func reconnectDelayDoublesFromOneToSixtySeconds() {
        let configuration = APNsClientConfiguration(credentials: .certificate(certificatePath: "c", privateKeyPath: "k"))
        #expect(configuration.reconnectDelay(afterFailures: 0) == .zero)
        #expect(configuration.reconnectDelay(afterFailures: 1) == .seconds(1))
        #expect(configuration.reconnectDelay(afterFailures: 2) == .seconds(2))
        #expect(configuration.reconnectDelay(afterFailures: 4) == .seconds(8))
        #expect(configuration.reconnectDelay(afterFailures: 7) == .seconds(60))
        #expect(configuration.reconnectDelay(afterFailures: 1000) == .seconds(60))
    }

    @Test func routingFollowsTheCustomEndpointOverride() {
        let custom = APNsEndpoint.custom(host: "127.0.0.1", port: 2197)
        var configuration = APNsClientConfiguration(credentials: .certificate(certificatePath: "c", privateKeyPath: "k"))
        #expect(configuration.endpoint(for: .production) == .production)
        #expect(configuration.endpoint(for: .sandbox) == .sandbox)
        configuration.customEndpoint = custom
        #expect(configuration.endpoint(for: .production) == custom)
        #expect(configuration.endpoint(for: .sandbox) == custom)
    }

    /// A port whose mock server was just stopped (connects are refused), and copies of that server's certificate and
    /// key: what a client trusts and presents, and what a server started on the port later presents.
    final class StoppedServer {
        let endpoint: APNsEndpoint
        let certificate = NSTemporaryDirectory() + "callpush-ca-" + UUID().uuidString + ".pem"
        var key: String { certificate + ".key" }
        let registry = MetricsRegistry()

        init() throws {
            let server = try APNsMockServer()
            endpoint = server.endpoint
            try FileManager.default.copyItem(atPath: server.certificatePath, toPath: certificate)
            try FileManager.default.copyItem(atPath: server.privateKeyPath, toPath: key)
            server.stop()
        }

        /// A certificate-auth client of this endpoint reporting to ``registry``, with `configure`'s settings.
        func client(_ configure: (inout APNsClientConfiguration) -> Void) throws -> APNsClient {
            var configuration = APNsClientConfiguration(
                credentials: .certificate(certificatePath: certificate, privateKeyPath: key),
                customEndpoint: .custom(host: endpoint.host, port: endpoint.port, caFile: certificate))
            configure(&configuration)
            return try APNsClient(configuration: configuration, metrics: registry)
        }

        var failedConnects: Double {
            registry.counter(APNsClientMetrics.connectionEvents, help: "",
                             labels: ["endpoint": endpoint.description, "event": "failed"]).value
        }

        deinit {
            try? FileManager.default.removeItem(atPath: certificate)
            try? FileManager.default.removeItem(atPath: key)
        }
    }

    /// A push to a server that refuses connects is handed back as soon as the connect fails (`ConnectFailed`, retry
    /// later) rather than after its request timeout, and so is every push while no connection is open; the pool keeps
    /// trying, backing off (with jitter) instead of connecting for every push.
    @Test func unreachableServerAnswersConnectFailedAtOnceAndBacksOff() async throws {
        let stopped = try StoppedServer()
        let client = try stopped.client {
            $0.requestTimeout = .seconds(30)
            $0.reconnectBackoffInitial = .milliseconds(100)
            $0.reconnectBackoffMaximum = .seconds(60)
        }
        defer { client.shutdown() }
        let started = ContinuousClock.now
        let result = await client.send(try Fixture.alert())
        #expect(result.reason == "ConnectFailed")
        #expect(result.disposition == .retryLater)
        #expect(ContinuousClock.now - started < .seconds(15), "not the 30 s request timeout")
        // A push every 50 ms for 1.2 s: each is refused at once; the connects follow the back-off (about 100, 200,
        // 400, 800 ms, more on a loaded machine), so a few attempts, not one per push.
        var refused = 0
        for _ in 0..<24 {
            if await client.send(try Fixture.alert()).reason == "ConnectFailed" { refused += 1 }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(refused == 24)
        let failed = stopped.failedConnects
        #expect(failed >= 2)
        #expect(failed <= 12, "\(failed) connects for 25 pushes")
    }

    /// `connect()` opens the pool without a push, and a connected pool keeps retrying after the backoff while its
    /// server is down (nothing queued): once the server is up its connections are there before the first push.
    @Test func connectedPoolOpensWithoutPushesAndRetriesUntilTheServerIsUp() async throws {
        let stopped = try StoppedServer()
        let client = try stopped.client {
            $0.connectionsPerPool = 2
            $0.reconnectBackoffInitial = .milliseconds(100)
            $0.reconnectBackoffMaximum = .milliseconds(200)
        }
        defer { client.shutdown() }
        client.connect()
        await Eventually.waitUntil(timeout: .seconds(5)) { stopped.failedConnects >= 3 }
        #expect(stopped.failedConnects >= 3, "a connected pool stopped retrying while nothing was queued")
        let server = try APNsMockServer(configuration: APNsMockServerConfiguration(
            port: stopped.endpoint.port, certificateFile: stopped.certificate, privateKeyFile: stopped.key))
        defer { server.stop() }
        await Eventually.waitUntil(timeout: .seconds(5)) { client.poolStatus(for: .production).openConnections == 2 }
        #expect(client.poolStatus(for: .production).openConnections == 2)
        #expect(server.recorder.countsByOutcome.isEmpty, "no push was sent")
        #expect(await client.send(try Fixture.alert()).disposition == .delivered)
    }

    @Test func shutdownAnswersQueuedAndInFlightPushes() async throws {
        // A request timeout beyond the wait below: the stalled pushes must still be in flight or queued when the test
        // looks for them on a loaded machine, not already timed out.
        let fixture = try Fixture(requestTimeout: .seconds(30), faults: APNsMockFaults(stallProbability: 1))
        defer { fixture.server.stop() }
        let requests = try (0..<50).map { try Fixture.alert(token: Fixture.deviceToken($0 + 1)) }
        let task = Task { try await fixture.sendAll(requests, timeout: .seconds(5)) }
        // Shut down once the pushes are on the stalling server's connection or queued behind it.
        let sent = await Eventually.waitUntil(timeout: .seconds(10)) {
            let status = fixture.client.poolStatus(for: .production)
            return status.inFlight > 0 && status.inFlight + status.queued == requests.count
        }
        #expect(sent, "\(fixture.client.poolStatus(for: .production))")
        fixture.client.shutdown()
        let results = try await task.value
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0.disposition == .retryLater })
        #expect(await fixture.send(try Fixture.alert()).reason == "NotProcessed")
    }
}
