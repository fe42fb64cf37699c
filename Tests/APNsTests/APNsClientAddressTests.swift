@testable import APNs
@testable import APNsMock
@testable import Crypto
import Foundation
import Synchronization
@testable import Telemetry
import TestSupport
import Testing

/// Where the client's connections go: every address of the host (IPv4 and IPv6), round-robin, the next one when an
/// address refuses, and a fresh resolution for every new connection. Mock APNs servers listen on several loopback
/// addresses (127.0.0.1, 127.0.0.2, ::1) on one port with one certificate (valid for localhost, 127.0.0.1 and ::1);
/// nothing listens on 127.0.0.3, which refuses.
@Suite struct APNsClientAddressTests {
    /// Mock servers sharing a port, a certificate and the provider-token key, one per loopback address.
    final class Servers: Sendable {
        let key: ES256PrivateKey
        let port: Int
        let byHost: [String: APNsMockServer]

        init(hosts: [String]) throws {
            let key = try ES256PrivateKey.generate()
            var started: [String: APNsMockServer] = [:]
            for attempt in 1...5 {
                started = [:]
                do {
                    try Self.start(hosts: hosts, key: key, into: &started)
                    break
                } catch {
                    // The first server's port was taken on another address: try another port.
                    for server in started.values { server.stop() }
                    if attempt == 5 { throw error }
                }
            }
            self.key = key
            self.byHost = started
            self.port = started[hosts[0]]!.port
        }

        /// The first host on an ephemeral port, the others on the same port with the first one's certificate.
        private static func start(hosts: [String], key: ES256PrivateKey, into started: inout [String: APNsMockServer]) throws {
            let first = try APNsMockServer(configuration: configuration(host: hosts[0], port: 0, key: key))
            started[hosts[0]] = first
            for host in hosts.dropFirst() {
                var settings: APNsMockServerConfiguration = configuration(host: host, port: first.port, key: key)
                settings.certificateFile = first.certificatePath
                settings.privateKeyFile = first.privateKeyPath
                started[host] = try APNsMockServer(configuration: settings)
            }
        }

        private static func configuration(host: String, port: Int, key: ES256PrivateKey) -> APNsMockServerConfiguration {
            let keys: [String: ES256PublicKey] = [APNsClientFixture.keyID: key.publicKey]
            let authentication = APNsMockConfiguration.Authentication.providerToken(keys: keys, teamID: APNsClientFixture.teamID)
            let rules = APNsMockConfiguration(authentication: authentication, allowedBundleIDs: [APNsClientFixture.bundleID])
            var configuration = APNsMockServerConfiguration(apns: rules)
            configuration.host = host
            configuration.port = port
            return configuration
        }

        /// A client for `localhost:<port>` (the name the certificate carries) whose addresses come from `resolver`,
        /// or from `getaddrinfo` when it is nil.
        func client(
            connections: Int, registry: MetricsRegistry = MetricsRegistry(), resolver: (@Sendable (APNsEndpoint) -> [String])?
        ) throws -> APNsClient {
            let credentials = APNsCredentials.token(
                keyPEM: try key.pemRepresentation(), keyID: APNsClientFixture.keyID, teamID: APNsClientFixture.teamID)
            let caFile: String = byHost.values.first!.certificatePath
            var configuration = APNsClientConfiguration(
                credentials: credentials, customEndpoint: APNsEndpoint.custom(host: "localhost", port: port, caFile: caFile))
            configuration.connectionsPerPool = connections
            configuration.addressResolver = resolver
            configuration.requestTimeout = .seconds(5)
            configuration.reconnectBackoffInitial = .milliseconds(20)
            configuration.reconnectBackoffMaximum = .milliseconds(100)
            return try APNsClient(configuration: configuration, metrics: registry)
        }

        func accepted(_ host: String) -> Int { byHost[host]?.acceptedConnections ?? 0 }

        var totalAccepted: Int {
            var total = 0
            for server in byHost.values { total += server.acceptedConnections }
            return total
        }

        func stop() { for server in byHost.values { server.stop() } }
    }

    /// Sends `count` pushes at once, so the pool puts streams on every open connection; returns how many were
    /// answered 200 once all are answered.
    static func deliveredConcurrently(_ count: Int, by client: APNsClient) async throws -> Int {
        let statuses = Mutex<[Int]>([])
        for index in 0..<count {
            let request = try APNsClientFixture.alert(token: APNsClientFixture.deviceToken(index))
            client.send(request, environment: .production) { result in statuses.withLock { $0.append(result.status ?? 0) } }
        }
        await Eventually.waitUntil(timeout: .seconds(30)) { statuses.withLock { $0.count } == count }
        let answered: [Int] = statuses.withLock { $0 }
        return answered.filter { $0 == 200 }.count
    }

    /// Sends `count` pushes one after the other; returns how many were answered 200.
    static func delivered(_ count: Int, by client: APNsClient) async throws -> Int {
        var delivered = 0
        for index in 0..<count {
            let request = try APNsClientFixture.alert(token: APNsClientFixture.deviceToken(index))
            let result: APNsResult = await client.send(request, environment: .production)
            if result.status == 200 { delivered += 1 }
        }
        return delivered
    }

    @Test func connectionsAreSpreadRoundRobinAndARefusingAddressFallsBackToTheNext() async throws {
        let servers = try Servers(hosts: ["127.0.0.1", "::1", "127.0.0.2"])
        defer { servers.stop() }
        let client = try servers.client(connections: 4) { _ in ["127.0.0.1", "127.0.0.3", "::1", "127.0.0.2"] }
        defer { client.shutdown() }
        let first = try await Self.delivered(1, by: client)
        #expect(first == 1)
        await Eventually.waitUntil(timeout: .seconds(10)) { client.poolStatus(for: .production).openConnections == 4 }
        let delivered = try await Self.deliveredConcurrently(400, by: client)
        #expect(delivered == 400)
        // Connection n starts at address n: 127.0.0.1; 127.0.0.3 refuses, so ::1; ::1; 127.0.0.2. The mock counts a
        // connection at its first request, and 400 pushes at once reach every connection.
        #expect(servers.accepted("127.0.0.1") == 1)
        #expect(servers.accepted("::1") == 2)
        #expect(servers.accepted("127.0.0.2") == 1)
        #expect(client.poolStatus(for: .production).lastConnectError == nil)
    }

    @Test func whenEveryAddressFailsTheErrorNamesEachAttempt() async throws {
        let servers = try Servers(hosts: ["127.0.0.1"])
        defer { servers.stop() }
        let client = try servers.client(connections: 1) { _ in ["127.0.0.3", "127.0.0.4"] }
        defer { client.shutdown() }
        client.send(try APNsClientFixture.alert(), environment: .production) { _ in }
        await Eventually.waitUntil(timeout: .seconds(10)) { client.poolStatus(for: .production).lastConnectError != nil }
        let error = try #require(client.poolStatus(for: .production).lastConnectError)
        #expect(error.contains("127.0.0.3:\(servers.port): connect: Connection refused"), "\(error)")
        #expect(error.contains("127.0.0.4:\(servers.port): connect: Connection refused"), "\(error)")
        #expect(servers.totalAccepted == 0)
    }

    @Test func theHostIsResolvedAgainForEveryNewConnection() async throws {
        let servers = try Servers(hosts: ["127.0.0.1", "::1"])
        defer { servers.stop() }
        // A DNS answer that changes: the first connection sees IPv4 only, later ones IPv6 only.
        let resolutions = Mutex<Int>(0)
        let registry = MetricsRegistry()
        let client = try servers.client(connections: 1, registry: registry) { (_: APNsEndpoint) -> [String] in
            let count: Int = resolutions.withLock { value in
                value += 1
                return value
            }
            return count == 1 ? ["127.0.0.1"] : ["::1"]
        }
        defer { client.shutdown() }
        let before = try await Self.delivered(3, by: client)
        #expect(before == 3)
        #expect(servers.accepted("127.0.0.1") == 1)
        // Past the healthy connection age: the dropped connection's replacement opens at once, not at the next push
        // (one that ended sooner would count as a failed connect).
        try await Task.sleep(for: .milliseconds(1200))
        servers.byHost["127.0.0.1"]!.dropAllConnections()
        let reopened = await Eventually.waitUntil(timeout: .seconds(10)) {
            registry.exposition().contains("event=\"opened\"} 2\n")
        }
        #expect(reopened)
        let after = try await Self.delivered(3, by: client)
        #expect(after == 3)
        #expect(servers.accepted("::1") == 1)
        #expect(servers.accepted("127.0.0.1") == 1)
        let resolved: Int = resolutions.withLock { $0 }
        #expect(resolved == 2)
    }

    /// No resolver: the real `getaddrinfo` on `localhost`, whichever of 127.0.0.1 and ::1 it returns.
    @Test func localhostIsResolvedWithGetaddrinfo() async throws {
        let servers = try Servers(hosts: ["127.0.0.1", "::1"])
        defer { servers.stop() }
        let client = try servers.client(connections: 2, resolver: nil)
        defer { client.shutdown() }
        let first = try await Self.delivered(1, by: client)
        #expect(first == 1)
        await Eventually.waitUntil(timeout: .seconds(10)) { client.poolStatus(for: .production).openConnections == 2 }
        let delivered = try await Self.deliveredConcurrently(200, by: client)
        #expect(delivered == 200)
        #expect(servers.totalAccepted == 2)
    }
}
