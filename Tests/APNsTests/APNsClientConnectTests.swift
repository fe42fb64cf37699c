@testable import APNs
@testable import APNsMock
import Foundation
@testable import Telemetry
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

    @Test func unreachableServerAnswersWithTimeoutAndBacksOff() async throws {
        // A port that was just bound and released: connects are refused.
        let server = try APNsMockServer()
        let endpoint = server.endpoint
        let certificate = server.certificatePath
        let key = server.privateKeyPath
        let copy = NSTemporaryDirectory() + "callpush-ca-" + UUID().uuidString + ".pem"
        try FileManager.default.copyItem(atPath: certificate, toPath: copy)
        let keyCopy = copy + ".key"
        try FileManager.default.copyItem(atPath: key, toPath: keyCopy)
        defer {
            try? FileManager.default.removeItem(atPath: copy)
            try? FileManager.default.removeItem(atPath: keyCopy)
        }
        server.stop()
        let registry = MetricsRegistry()
        let client = try APNsClient(
            configuration: APNsClientConfiguration(
                credentials: .certificate(certificatePath: copy, privateKeyPath: keyCopy),
                customEndpoint: .custom(host: endpoint.host, port: endpoint.port, caFile: copy),
                requestTimeout: .milliseconds(1200), reconnectBackoffInitial: .milliseconds(100),
                reconnectBackoffMaximum: .seconds(60)),
            metrics: registry)
        defer { client.shutdown() }
        let result = await client.send(try Fixture.alert())
        #expect(result.reason == "Timeout")
        #expect(result.disposition == .retryLater)
        let failed = registry.counter(APNsClientMetrics.connectionEvents, help: "",
                                      labels: ["endpoint": endpoint.description, "event": "failed"]).value
        // 100 ms, 200 ms, 400 ms, 800 ms: at most 4–5 attempts in 1.2 s, not one every 50 ms.
        #expect(failed >= 2)
        #expect(failed <= 5)
    }

    /// `connect()` opens the pool without a push, and a connected pool keeps retrying after the backoff while its
    /// server is down (nothing queued): once the server is up its connections are there before the first push.
    @Test func connectedPoolOpensWithoutPushesAndRetriesUntilTheServerIsUp() async throws {
        let first = try APNsMockServer()
        let endpoint = first.endpoint
        let certificate = NSTemporaryDirectory() + "callpush-connect-" + UUID().uuidString + ".pem"
        let key = certificate + ".key"
        try FileManager.default.copyItem(atPath: first.certificatePath, toPath: certificate)
        try FileManager.default.copyItem(atPath: first.privateKeyPath, toPath: key)
        defer {
            try? FileManager.default.removeItem(atPath: certificate)
            try? FileManager.default.removeItem(atPath: key)
        }
        first.stop()
        let registry = MetricsRegistry()
        let client = try APNsClient(
            configuration: APNsClientConfiguration(
                credentials: .certificate(certificatePath: certificate, privateKeyPath: key),
                customEndpoint: .custom(host: endpoint.host, port: endpoint.port, caFile: certificate),
                connectionsPerPool: 2, reconnectBackoffInitial: .milliseconds(100),
                reconnectBackoffMaximum: .milliseconds(200)),
            metrics: registry)
        defer { client.shutdown() }
        let failed = registry.counter(APNsClientMetrics.connectionEvents, help: "",
                                      labels: ["endpoint": endpoint.description, "event": "failed"])
        client.connect()
        try await Fixture.waitUntil { failed.value >= 3 }
        #expect(failed.value >= 3, "a connected pool stopped retrying while nothing was queued")
        let server = try APNsMockServer(configuration: APNsMockServerConfiguration(
            port: endpoint.port, certificateFile: certificate, privateKeyFile: key))
        defer { server.stop() }
        try await Fixture.waitUntil { client.poolStatus(for: .production).openConnections == 2 }
        #expect(client.poolStatus(for: .production).openConnections == 2)
        #expect(server.recorder.countsByOutcome.isEmpty, "no push was sent")
        #expect(await client.send(try Fixture.alert()).disposition == .delivered)
    }

    @Test func shutdownAnswersQueuedAndInFlightPushes() async throws {
        let fixture = try Fixture(faults: APNsMockFaults(stallProbability: 1))
        defer { fixture.server.stop() }
        let requests = try (0..<50).map { try Fixture.alert(token: Fixture.deviceToken($0 + 1)) }
        let task = Task { try await fixture.sendAll(requests, timeout: .seconds(5)) }
        try await Task.sleep(for: .milliseconds(300))
        fixture.client.shutdown()
        let results = try await task.value
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0.disposition == .retryLater })
        #expect(await fixture.send(try Fixture.alert()).reason == "NotProcessed")
    }
}
