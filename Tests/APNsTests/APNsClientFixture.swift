@testable import APNs
@testable import APNsMock
@testable import Crypto
import Foundation
@testable import HTTP2
import Synchronization
@testable import Telemetry
import TestSupport
import Testing

/// A mock APNs server and a client pointed at it, over real TLS on 127.0.0.1.
final class APNsClientFixture: Sendable {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    static let bundleID = "com.example.app"

    let key: ES256PrivateKey
    let server: APNsMockServer
    let client: APNsClient
    let registry: MetricsRegistry

    /// - Parameters:
    ///   - tokenAuth: provider-token mode (else certificate mode without client certificates).
    ///   - clientClock / mockClock: token clocks (the same object means agreeing clocks).
    ///   - signingKey: the key the client signs with (default: the key the mock trusts).
    init(
        tokenAuth: Bool = true,
        connections: Int = 1,
        requestTimeout: Duration = .seconds(5),
        faults: APNsMockFaults = .none,
        clientClock: any WallClock = SystemWallClock(),
        mockClock: any WallClock = SystemWallClock(),
        signingKey: ES256PrivateKey? = nil,
        unauthenticatedLimit: Int = 1,
        maximumPayloadBytes: Int? = nil,
        minimumTokenUpdateInterval: Duration = .seconds(1200),
        maximumTransparentResends: Int = 3,
        eventLoops: Int = 1,
        firstStreamID: Int32 = 1,
        reconnectBackoff: (initial: Duration, maximum: Duration) = (.milliseconds(50), .milliseconds(500))
    ) throws {
        key = try ES256PrivateKey.generate()
        let authentication: APNsMockConfiguration.Authentication =
            tokenAuth ? .providerToken(keys: [Self.keyID: key.publicKey], teamID: Self.teamID) : .certificate
        server = try APNsMockServer(configuration: APNsMockServerConfiguration(
            apns: APNsMockConfiguration(
                authentication: authentication, allowedBundleIDs: [Self.bundleID],
                minimumTokenUpdateInterval: minimumTokenUpdateInterval, clock: mockClock,
                maximumPayloadBytes: maximumPayloadBytes),
            faults: faults,
            unauthenticatedMaxConcurrentStreams: unauthenticatedLimit))
        let credentials: APNsCredentials = tokenAuth
            ? .token(keyPEM: try (signingKey ?? key).pemRepresentation(), keyID: Self.keyID, teamID: Self.teamID)
            : .certificate(certificatePath: server.certificatePath, privateKeyPath: server.privateKeyPath)
        registry = MetricsRegistry()
        var configuration = APNsClientConfiguration(
            credentials: credentials, customEndpoint: server.endpoint, connectionsPerPool: connections,
            requestTimeout: requestTimeout, reconnectBackoffInitial: reconnectBackoff.initial,
            reconnectBackoffMaximum: reconnectBackoff.maximum, eventLoops: eventLoops,
            maximumTransparentResends: maximumTransparentResends, clock: clientClock)
        configuration.firstStreamID = firstStreamID
        client = try APNsClient(configuration: configuration, metrics: registry)
    }

    func shutdown() {
        client.shutdown()
        server.stop()
    }

    static func deviceToken(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        return String(repeating: "a", count: 64 - hex.count) + hex
    }

    static func alert(token: String = deviceToken(1), topic: String = bundleID, payloadBytes: Int = 0) throws
        -> APNsRequest
    {
        var payload = #"{"aps":{"alert":"incoming call"},"pushType":1}"#
        if payloadBytes > payload.utf8.count {
            payload = #"{"aps":{"alert":"incoming call"},"pad":""#
                + String(repeating: "x", count: payloadBytes - payload.utf8.count - 10) + #""}"#
        }
        return try APNsRequest(
            deviceToken: DeviceToken(token), pushType: .alert, topic: topic, payload: Array(payload.utf8))
    }

    func send(_ request: APNsRequest) async -> APNsResult { await client.send(request, environment: .production) }

    /// Sends every request at once; returns all results, or fails the test when not all arrive within `timeout`.
    func sendAll(_ requests: [APNsRequest], timeout: Duration = .seconds(30)) async throws -> [APNsResult] {
        let results = Mutex<[APNsResult]>([])
        for request in requests {
            client.send(request, environment: .production) { result in results.withLock { $0.append(result) } }
        }
        await Eventually.waitUntil(timeout: timeout) { results.withLock { $0.count } >= requests.count }
        let final = results.withLock { $0 }
        #expect(final.count == requests.count, "every request is answered")
        return final
    }

    func eventCount(_ event: String) -> Double {
        registry.counter(APNsClientMetrics.connectionEvents, help: "APNs connection life-cycle events.",
                         labels: ["endpoint": server.endpoint.description, "event": event]).value
    }
}
