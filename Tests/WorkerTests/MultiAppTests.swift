@testable import APNs
@testable import APNsMock
@testable import Crypto
import Foundation
@testable import Kafka
@testable import Telemetry
import TestSupport
import Testing

@testable import Worker

/// Several apps in one worker through Kafka: each app's pushes carry its own credentials (the mock verifies every
/// JWT against the key and team of its `kid`), an unknown bundle id is dead-lettered, a rejected key stays the
/// problem of its own app, and a reload with a rotated key loses and repeats nothing.
@Suite(.serialized) struct MultiAppTests {
    static let team1 = "TEAM000001"
    static let team2 = "TEAM000002"

    /// A directory of `.p8` files; keys by id.
    final class Keys: Sendable {
        let directory: String
        let keys: [String: ES256PrivateKey]

        init(_ ids: [String]) throws {
            directory = NSTemporaryDirectory() + "callpush-apps-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var keys: [String: ES256PrivateKey] = [:]
            for id in ids {
                let key = try ES256PrivateKey.generate()
                try key.pemRepresentation().write(toFile: "\(directory)/\(id).p8", atomically: true, encoding: .utf8)
                keys[id] = key
            }
            self.keys = keys
        }

        func path(_ id: String) -> String { "\(directory)/\(id).p8" }

        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func mock(trusting keys: Keys, teams: [String: String], latency: Duration = .zero) throws -> APNsMockServer {
        var apns = APNsMockConfiguration(authentication: .providerToken(
            keys: Dictionary(uniqueKeysWithValues: teams.keys.map { ($0, keys.keys[$0]!.publicKey) }), teamID: team1))
        apns.keyTeams = teams
        var faults = APNsMockFaults.none
        faults.latency = latency
        return try APNsMockServer(configuration: APNsMockServerConfiguration(apns: apns, faults: faults, recorderCapacity: 100_000))
    }

    /// The mock's connections that have carried a request and are still open.
    static func openConnections(_ server: APNsMockServer) -> Int {
        server.core.state.withLock { $0.connections.values.filter { !$0.peer.connection.isClosed }.count }
    }

    static func apps(
        _ list: [(bundleID: String, keyID: String, teamID: String)], keys: Keys, server: APNsMockServer, limit: Int? = 5000
    ) -> APNsAppsConfiguration {
        APNsAppsConfiguration(
            apps: list.map {
                APNsAppConfiguration(bundleID: $0.bundleID, credentials: .token(keyPath: keys.path($0.keyID), keyID: $0.keyID, teamID: $0.teamID))
            },
            client: APNsClientConfiguration(
                credentials: .token(keyPEM: "", keyID: "", teamID: ""), customEndpoint: server.endpoint,
                connectionsPerPool: 1, requestTimeout: .seconds(10), reconnectBackoffInitial: .milliseconds(50)),
            maximumInFlightPerCredential: limit)
    }

    static func event(_ id: String, topic: String, push: String = "alert") -> (callID: String, json: String) {
        let created = Int64(Date().timeIntervalSince1970 * 1000)
        return ("c-\(id)", #"{"event_id":"\#(id)","type":"incoming","call_id":"c-\#(id)","device_token":"\#(String(repeating: "ab", count: 32))","push":"\#(push)","topic":"\#(topic)","environment":"production","created_at":\#(created),"ring_timeout_s":600}"#)
    }

    /// The `kid` and `iss` of the provider token a recorded push carried.
    static func signer(of entry: APNsMockRecorder.Entry) -> (keyID: String, teamID: String)? {
        guard let authorization = entry.headers.first(where: { $0.name == "authorization" })?.value else { return nil }
        let parts = authorization.dropFirst("bearer ".count).split(separator: ".")
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let claims = Base64URL.decode(parts[1]),
            let kid = (try? JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])?["kid"] as? String,
            let iss = (try? JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any])?["iss"] as? String
        else { return nil }
        return (kid, iss)
    }

    static func header(_ message: KafkaMessage, _ name: String) -> String? {
        message.headers.first { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    /// Sends each push through the client of its `apns-topic`.
    final class ClientPerApp: PushSender {
        let clients: [String: APNsClient]
        init(_ clients: [String: APNsClient]) { self.clients = clients }
        func send(_ pushes: [APNsPush]) {
            for push in pushes { clients[push.request.topic]!.send([push]) }
        }
    }

    /// Two apps on one partition, one of them unreachable (its APNs port refuses every connect): its pushes are handed
    /// back at once (retry tier, error class `connect`) instead of holding the partition's in-flight window for the
    /// request timeout, so the other app's calls ring meanwhile.
    @Test func anUnreachableAppFailsFastAndTheOtherAppsCallsRing() async throws {
        let key = try ES256PrivateKey.generate()
        let server = try APNsMockServer(configuration: APNsMockServerConfiguration(apns: APNsMockConfiguration(
            authentication: .providerToken(keys: ["KEY0000001": key.publicKey], teamID: Self.team1))))
        defer { server.stop() }
        let registry = MetricsRegistry()
        func client(_ endpoint: APNsEndpoint, _ label: String) throws -> APNsClient {
            try APNsClient(
                configuration: APNsClientConfiguration(
                    credentials: .token(keyPEM: try key.pemRepresentation(), keyID: "KEY0000001", teamID: Self.team1),
                    customEndpoint: endpoint, connectionsPerPool: 1, requestTimeout: .seconds(30),
                    reconnectBackoffInitial: .milliseconds(100), reconnectBackoffMaximum: .milliseconds(200)),
                metrics: registry, metricLabels: ["credential": label])
        }
        let reachable = try client(server.endpoint, "reachable")
        let unreachable = try client(.custom(host: "127.0.0.1", port: FreePort.next(), caFile: server.certificatePath), "unreachable")
        defer { reachable.shutdown(); unreachable.shutdown() }
        let harness = try PipelineHarness()
        let worker = try harness.makeWorker(sender: ClientPerApp(["com.up.app": reachable, "com.down.app": unreachable]),
                                            registry: registry) {
            $0.consumer.backPressure.maxInFlightPerPartition = 10
        }
        // One call id for all: one partition, one call's events in order. The unreachable app's come first.
        var events: [(callID: String, json: String)] = []
        for index in 0..<20 { events.append(Self.event("d\(index)", topic: "com.down.app")) }
        for index in 0..<20 { events.append(Self.event("u\(index)", topic: "com.up.app")) }
        try await harness.produce(events.map { ("c-one", $0.json) })
        // Well inside the 30 s request timeout that each unreachable push would otherwise have waited.
        let rang = await Eventually.waitUntil(timeout: .seconds(10)) { server.recorder.totalCount >= 20 }
        #expect(rang, "\(PipelineHarness.outcomes(registry))")
        let finished = await Eventually.waitUntil(timeout: .seconds(30)) {
            let outcomes = PipelineHarness.outcomes(registry)
            return outcomes[.delivered, default: 0] + outcomes[.deadLettered, default: 0] + outcomes[.expired, default: 0] >= 40
        }
        #expect(finished, "\(PipelineHarness.outcomes(registry))")
        #expect(PipelineHarness.outcomes(registry)[.delivered] == 20)
        let retries = try await harness.read(["calls.retry.t0"], atLeast: 20)
        #expect(retries.count >= 20 && retries.allSatisfy { Self.header($0, "x-error-class") == "connect" })
        #expect(retries.allSatisfy { Self.header($0, "x-error-reason") == "ConnectFailed" })
        await worker.shutdown()
    }

    @Test func eachAppPushesWithItsOwnKeyAndTeamAndTroubleStaysWithItsApp() async throws {
        let keys = try Keys(["KEY0000001", "KEY0000002", "KEY0000003"])
        // KEY0000003 is not known to the mock: every push of its app is answered 403 InvalidProviderToken.
        let server = try Self.mock(trusting: keys, teams: ["KEY0000001": Self.team1, "KEY0000002": Self.team2])
        let registry = MetricsRegistry()
        let router = try APNsAppRouter(
            configuration: Self.apps([
                ("com.example.main", "KEY0000001", Self.team1), ("com.example.lite", "KEY0000001", Self.team1),
                ("com.brand.app", "KEY0000002", Self.team2), ("com.revoked.app", "KEY0000003", Self.team1),
            ], keys: keys, server: server),
            registry: registry)
        let harness = try PipelineHarness()
        let worker = try harness.makeWorker(sender: router, registry: registry)
        var events: [(callID: String, json: String)] = []
        for index in 0..<20 {
            // The revoked app's events come first in every group: they must not hold up the others.
            events.append(Self.event("r\(index)", topic: "com.revoked.app"))
            events.append(Self.event("m\(index)", topic: "com.example.main"))
            events.append(Self.event("l\(index)", topic: "com.example.lite", push: "voip"))
            events.append(Self.event("b\(index)", topic: "com.brand.app"))
        }
        events.append(Self.event("u0", topic: "com.unknown.app"))
        try await harness.produce(events)
        let finished = await Eventually.waitUntil(timeout: .seconds(60)) {
            PipelineHarness.outcomes(registry).total >= events.count
        }
        #expect(finished)
        let outcomes = PipelineHarness.outcomes(registry)
        #expect(outcomes[.delivered] == 60)
        #expect(outcomes[.deadLettered] == 21)
        #expect(outcomes[.retried, default: 0] == 0, "no app's push waited for another app's trouble")

        let delivered = server.recorder.entries.filter { $0.status == 200 }
        #expect(delivered.count == 60)
        for entry in delivered {
            let topic = entry.headers.first { $0.name == "apns-topic" }?.value ?? ""
            let expected = topic == "com.brand.app" ? ("KEY0000002", Self.team2) : ("KEY0000001", Self.team1)
            let signer = Self.signer(of: entry)
            #expect(signer?.keyID == expected.0 && signer?.teamID == expected.1, "\(topic) signed by \(String(describing: signer))")
        }
        #expect(Set(delivered.compactMap { $0.headers.first { $0.name == "apns-topic" }?.value })
            == ["com.example.main", "com.example.lite.voip", "com.brand.app"])

        let dlq = try await harness.read(["calls.dlq"], atLeast: 21)
        let reasons = Dictionary(grouping: dlq) { Self.header($0, "x-dlq-reason") ?? "" }.mapValues(\.count)
        #expect(reasons == ["apns_credentials": 20, "unknown_app": 1])

        let text = registry.exposition()
        #expect(text.contains(#"callpush_apns_app_requests_total{bundle_id="com.brand.app",disposition="delivered"} 20"#))
        #expect(text.contains(#"callpush_apns_app_requests_total{bundle_id="com.revoked.app",disposition="fixCredentials"} 20"#))
        #expect(text.contains("callpush_apns_unknown_app_requests_total 1\n"))
        #expect(text.contains(#"callpush_dead_letters_total{reason="unknown_app"} 1"#))
        // One client per key: the two apps of KEY0000001 share its connection.
        #expect(text.contains(#"callpush_apns_connections{credential="KEY0000001",endpoint="#))
        #expect(!text.contains(#"credential="com.example.lite""#))
        await worker.shutdown()
        router.shutdown()
        server.stop()
    }

    @Test func aCredentialAtItsBoundIsRetriedLaterInsteadOfFillingTheWindow() async throws {
        let keys = try Keys(["KEY0000001", "KEY0000002"])
        // Every answer takes 2 s: at most 2 pushes of each credential may wait for one.
        let server = try Self.mock(trusting: keys, teams: ["KEY0000001": Self.team1, "KEY0000002": Self.team2], latency: .seconds(2))
        let registry = MetricsRegistry()
        let router = try APNsAppRouter(
            configuration: Self.apps([("com.example.main", "KEY0000001", Self.team1), ("com.brand.app", "KEY0000002", Self.team2)],
                                     keys: keys, server: server, limit: 2),
            registry: registry)
        let requests = (0..<6).map { index in
            try! APNsRequest(deviceToken: DeviceToken(String(repeating: "ab", count: 32)), pushType: .alert,
                             topic: "com.example.main", payload: Array(#"{"aps":{"alert":"\#(index)"}}"#.utf8))
        }
        let results = await withTaskGroup(of: APNsResult.self) { group in
            for request in requests { group.addTask { await router.send(request) } }
            group.addTask {
                await router.send(try! APNsRequest(
                    deviceToken: DeviceToken(String(repeating: "cd", count: 32)), pushType: .alert, topic: "com.brand.app",
                    payload: Array(#"{"aps":{"alert":"b"}}"#.utf8)))
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let limited = results.filter { $0.reason == APNsReason.appInFlightLimit.rawValue }
        #expect(limited.count == 4)
        #expect(limited.allSatisfy { $0.disposition == .retryLater && $0.status == nil })
        #expect(results.filter { $0.status == 200 }.count == 3, "two of main's and the other app's push")
        #expect(registry.exposition().contains(#"callpush_apns_app_in_flight_limited_total{bundle_id="com.example.main"} 4"#))
        #expect(registry.exposition().contains(#"callpush_apns_app_in_flight_limited_total{bundle_id="com.brand.app"} 0"#))
        router.shutdown()
        server.stop()
    }

    /// A reload that keeps a key makes a new client for it while the old one drains, both counting into the same
    /// `credential` series: the connections gauge is the sum of both pools, so the old pool closing its connection
    /// after the new one opened leaves 1, not 0 (each pool used to set the gauge to its own count).
    @Test func aReloadThatKeepsAKeyKeepsItsConnectionCount() async throws {
        let keys = try Keys(["KEY0000001"])
        let server = try Self.mock(trusting: keys, teams: ["KEY0000001": Self.team1], latency: .milliseconds(500))
        let registry = MetricsRegistry()
        let configuration = Self.apps([("com.example.main", "KEY0000001", Self.team1)], keys: keys, server: server)
        let router = try APNsAppRouter(configuration: configuration, registry: registry)
        let request = try APNsRequest(deviceToken: DeviceToken(String(repeating: "ab", count: 32)), pushType: .alert,
                                      topic: "com.example.main", payload: Array(#"{"aps":{"alert":"a"}}"#.utf8))
        let connections = registry.gauge(
            APNsClientMetrics.connections, help: "", labels: ["credential": "KEY0000001", "endpoint": server.endpoint.description])
        // A push on the old client's connection, answered after the new client has opened its own.
        async let old = router.send(request)
        #expect(await Eventually.waitUntil(timeout: .seconds(10)) { connections.value == 1 })
        try router.apply(configuration)
        #expect(await router.send(request).status == 200)
        #expect(await old.status == 200)
        #expect(server.acceptedConnections == 2)
        // The old client closes once its push is answered; its connection's close must leave the new one counted.
        let oldClosed = await Eventually.waitUntil(timeout: .seconds(20)) { Self.openConnections(server) == 1 }
        #expect(oldClosed, "the mock still has \(Self.openConnections(server)) connections open")
        // Asserting absence (the gauge does not drop when the old pool counts its closed connection, which it may do
        // just after the mock saw the close): a bounded wait.
        try await Task.sleep(for: .milliseconds(500))
        #expect(connections.value == 1)
        router.shutdown()
        #expect(await Eventually.waitUntil(timeout: .seconds(10)) { connections.value == 0 })
        server.stop()
    }

    /// A connected router (as `callpush run` connects it at start) opens every credential's connection before any push,
    /// and the connection of a credential a reload adds too.
    @Test func aConnectedRouterOpensEveryCredentialsConnectionBeforeAnyPush() async throws {
        let keys = try Keys(["KEY0000001", "KEY0000002", "KEY0000003"])
        let teams = ["KEY0000001": Self.team1, "KEY0000002": Self.team1, "KEY0000003": Self.team1]
        let server = try Self.mock(trusting: keys, teams: teams)
        defer { server.stop() }
        let registry = MetricsRegistry()
        let router = try APNsAppRouter(configuration: Self.apps([
            ("com.example.one", "KEY0000001", Self.team1), ("com.example.two", "KEY0000002", Self.team1),
        ], keys: keys, server: server), registry: registry)
        defer { router.shutdown() }
        func open(_ keyID: String) -> Bool {
            registry.exposition().contains(#"callpush_apns_connections{credential="\#(keyID)",endpoint="\#(server.endpoint)"} 1"#)
        }
        router.connect()
        #expect(await Eventually.waitUntil(timeout: .seconds(10)) { open("KEY0000001") && open("KEY0000002") })
        try router.apply(Self.apps([
            ("com.example.one", "KEY0000001", Self.team1), ("com.example.two", "KEY0000002", Self.team1),
            ("com.example.three", "KEY0000003", Self.team1),
        ], keys: keys, server: server))
        #expect(await Eventually.waitUntil(timeout: .seconds(10)) { open("KEY0000003") })
        #expect(server.recorder.countsByOutcome.isEmpty, "no push was sent")
    }

    @Test func aReloadWithARotatedKeyMidTrafficLosesNothingAndSendsNothingTwice() async throws {
        let keys = try Keys(["KEY0000001", "KEY0000009"])
        let server = try Self.mock(trusting: keys, teams: ["KEY0000001": Self.team1, "KEY0000009": Self.team1], latency: .seconds(3))
        let registry = MetricsRegistry()
        let before = Self.apps([("com.example.main", "KEY0000001", Self.team1)], keys: keys, server: server)
        let router = try APNsAppRouter(configuration: before, registry: registry)
        let harness = try PipelineHarness()
        let worker = try harness.makeWorker(sender: router, registry: registry)
        let count = 300
        // The first half is on its way (answers take 3 s: the events are produced one by one, a few ms apart, and 20 are
        // in flight even when a loaded machine produces fewer than 10 a second) when the rotated key is applied; the
        // second half follows.
        try await harness.produce((0..<150).map { Self.event("a\($0)", topic: "com.example.main") })
        let inFlight = registry.gauge(APNsAppRouterMetrics.appInFlight, help: "", labels: ["bundle_id": "com.example.main"])
        _ = await Eventually.waitUntil(timeout: .seconds(30)) { inFlight.value >= 20 }
        #expect(inFlight.value >= 20, "pushes of the old key are in flight during the reload")
        try router.apply(Self.apps([("com.example.main", "KEY0000009", Self.team1)], keys: keys, server: server))
        try await harness.produce((0..<150).map { Self.event("b\($0)", topic: "com.example.main") })
        let finished = await Eventually.waitUntil(timeout: .seconds(60)) {
            PipelineHarness.outcomes(registry).total >= count
        }
        #expect(finished)
        #expect(PipelineHarness.outcomes(registry)[.delivered] == count)
        #expect(PipelineHarness.outcomes(registry).total == count)
        let entries = server.recorder.entries
        let ids = entries.compactMap { $0.headers.first { $0.name == "apns-collapse-id" }?.value }
        #expect(entries.count == count, "nothing sent twice")
        #expect(Set(ids).count == count, "every call sent once")
        let signers = Dictionary(grouping: entries) { Self.signer(of: $0)?.keyID ?? "none" }.mapValues(\.count)
        #expect(signers["KEY0000001", default: 0] > 0 && signers["KEY0000009", default: 0] > 0 && signers.count == 2)
        #expect(registry.exposition().contains(#"callpush_apns_config_reloads_total{result="ok"} 1"#))
        // The old key's client is shut down once its pushes are answered, and then its series leave the registry;
        // the new key's connection stays.
        let closed = await Eventually.waitUntil(timeout: .seconds(20)) {
            !registry.exposition().contains(#"credential="KEY0000001""#)
        }
        #expect(closed)
        #expect(registry.exposition().contains(
            #"callpush_apns_connections{credential="KEY0000009",endpoint="\#(server.endpoint)"} 1"#))
        // A configuration that does not validate keeps the one in force.
        #expect(throws: APNsClientError.self) {
            try router.apply(Self.apps([("com.example.main", "KEY000000X", Self.team1)], keys: keys, server: server))
        }
        #expect(router.configuration?.apps.first?.credentials == .token(keyPath: keys.path("KEY0000009"), keyID: "KEY0000009", teamID: Self.team1))
        await worker.shutdown()
        router.shutdown()
        server.stop()
    }

    /// A certificate credential shows its notAfter (as Crypto reads it, 20 days ahead); a token credential has no
    /// expiry series; a reload without the certificate app removes its series, so no alert fires for it.
    @Test func aCertificateCredentialShowsItsExpiryUntilItIsRemoved() throws {
        let keys = try Keys(["KEY0000001"])
        let server = try Self.mock(trusting: keys, teams: ["KEY0000001": Self.team1])
        let certificate = try SelfSignedCertificate.generate(commonName: "Apple Push Services: com.example.enterprise", validityDays: 20)
        let files = try certificate.write(toDirectory: keys.directory, certificateFileName: "enterprise.pem", privateKeyFileName: "enterprise-key.pem")
        let tokenOnly = Self.apps([("com.example.main", "KEY0000001", Self.team1)], keys: keys, server: server)
        var withCertificate = tokenOnly
        withCertificate.apps.append(APNsAppConfiguration(
            bundleID: "com.example.enterprise",
            credentials: .certificate(certificatePath: files.certificatePath, privateKeyPath: files.privateKeyPath)))
        let registry = MetricsRegistry()
        let router = try APNsAppRouter(configuration: withCertificate, registry: registry)
        func expiries() -> [String: Double] {
            let prefix = APNsAppRouterMetrics.certificateExpiry + "{credential=\""
            var values: [String: Double] = [:]
            for line in registry.exposition().split(separator: "\n") where line.hasPrefix(prefix) {
                let parts = line.dropFirst(prefix.count).split(separator: "\"")
                values[String(parts[0])] = Double(parts[1].dropFirst(2))
            }
            return values
        }
        let notAfter = try CertificateValidity(pem: certificate.certificatePEM).notAfter
        #expect(expiries() == ["certificate:com.example.enterprise": Double(notAfter)])
        #expect(abs(Double(notAfter) - Date().timeIntervalSince1970 - 20 * 86_400) < 3_600, "20 days ahead")
        try router.apply(tokenOnly)
        #expect(expiries().isEmpty)
        #expect(registry.exposition().contains(#"callpush_apns_credential_loaded_timestamp_seconds{credential="KEY0000001"}"#))
        #expect(!registry.exposition().contains(
            #"callpush_apns_credential_loaded_timestamp_seconds{credential="certificate:com.example.enterprise"}"#))
        router.shutdown()
        server.stop()
    }
}
