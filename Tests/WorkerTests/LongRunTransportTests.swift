@testable import APNs
@testable import APNsMock
import Foundation
@testable import HTTP2
@testable import Kafka
import Synchronization
@testable import Telemetry
import TestSupport
import Testing

@testable import Worker

/// The transport's slow troubles all at once, for a minute of traffic: every connection starts near the end of its
/// stream ids (it retires after a few hundred pushes and the pool replaces it), one app's credential is rejected by
/// APNs until a reload fixes it 45 s in, and the metrics port is flooded with connections while probes and scrapes
/// keep asking. The worker keeps sending the healthy app's calls throughout, every event ends in one outcome, the
/// failing app's events are dead-lettered with the credential reason until the fix and delivered after it, and every
/// probe is answered.
@Suite struct LongRunTransportTests {
    static let failingFor = Duration.seconds(45)
    static let fixedFor = Duration.seconds(20)
    static let token = String(repeating: "ab", count: 32)

    static func event(_ id: String, type: String = "incoming", call: String, topic: String) -> (callID: String, json: String) {
        let created = Int64(Date().timeIntervalSince1970 * 1000)
        return (call, #"{"event_id":"\#(id)","type":"\#(type)","call_id":"\#(call)","device_token":"\#(token)","push":"alert","topic":"\#(topic)","environment":"production","created_at":\#(created),"ring_timeout_s":600}"#)
    }

    /// Connections to the metrics port, opened and held until `stop`, renewed in rounds of 2000.
    final class Flood: Sendable {
        let stop = Atomic<Bool>(false)
        let opened = Atomic<Int>(0)

        func start(port: Int) {
            Thread { [self] in
                while !stop.load(ordering: .relaxed) {
                    var held: [RawHTTPClient] = []
                    while !stop.load(ordering: .relaxed) && held.count < 2000 {
                        if let client = try? RawHTTPClient(port: port) {
                            held.append(client)
                            opened.add(1, ordering: .relaxed)
                        }
                    }
                }
            }.start()
        }
    }

    @Test(.timeLimit(.minutes(4))) func aMinuteOfRetiringConnectionsAFailingCredentialAndAFloodedMetricsPort() async throws {
        let keys = try MultiAppTests.Keys(["KEY0000001", "KEY0000003"])
        // KEY0000003 is not known to the mock: the failing app's pushes are answered 403 InvalidProviderToken.
        let server = try MultiAppTests.mock(trusting: keys, teams: ["KEY0000001": MultiAppTests.team1])
        defer { server.stop() }
        func apps(failingKey: String) -> APNsAppsConfiguration {
            var apps = MultiAppTests.apps([("com.example.main", "KEY0000001", MultiAppTests.team1),
                                           ("com.example.failing", failingKey, MultiAppTests.team1)], keys: keys, server: server)
            apps.client.firstStreamID = HTTP2ClientConfiguration().retirementStreamID - 400  // 200 pushes a connection
            return apps
        }
        let registry = MetricsRegistry()
        let router = try APNsAppRouter(configuration: apps(failingKey: "KEY0000003"), registry: registry)
        defer { router.shutdown() }
        let harness = try PipelineHarness()
        let worker = try harness.makeWorker(sender: router, registry: registry)
        var telemetryConfiguration = TelemetryServerConfiguration()
        telemetryConfiguration.host = "127.0.0.1"
        telemetryConfiguration.port = 0
        let telemetry = try TelemetryServer(configuration: telemetryConfiguration, registry: registry,
                                            readiness: ReadinessFlag(ready: true))
        defer { telemetry.stop() }
        let flood = Flood()
        flood.start(port: telemetry.port)
        flood.start(port: telemetry.port)
        defer { flood.stop.store(true, ordering: .relaxed) }

        // Ten batches a second: four calls of the healthy app (each hung up a batch later) and one of the failing app.
        var produced = 0, failingBefore = 0, failingAfter = 0, mainCalls = 0
        var probes: [String] = []
        let started = ContinuousClock.now
        var fixed = false
        var batch = 0
        while ContinuousClock.now - started < Self.failingFor + Self.fixedFor {
            if !fixed && ContinuousClock.now - started >= Self.failingFor {
                try router.apply(apps(failingKey: "KEY0000001"))
                fixed = true
            }
            var events: [(callID: String, json: String)] = []
            for index in 0..<4 {
                events.append(Self.event("m\(batch)-\(index)", call: "m\(batch)-\(index)", topic: "com.example.main"))
                if batch > 0 {
                    events.append(Self.event("h\(batch)-\(index)", type: "hangup", call: "m\(batch - 1)-\(index)", topic: "com.example.main"))
                }
            }
            mainCalls += 4
            events.append(Self.event("f\(batch)", call: "f\(batch)", topic: "com.example.failing"))
            if fixed { failingAfter += 1 } else { failingBefore += 1 }
            try await harness.produce(events)
            produced += events.count
            let path = batch % 2 == 0 ? "/healthz" : "/metrics"
            probes.append((try? RawHTTPClient.request(port: telemetry.port, "GET \(path) HTTP/1.1\r\n\r\n").statusLine) ?? "no connection")
            batch += 1
            try await Task.sleep(for: .milliseconds(100))
        }
        flood.stop.store(true, ordering: .relaxed)

        let total = produced
        let finished = await Eventually.waitUntil(timeout: .seconds(60)) {
            PipelineHarness.outcomes(registry).total >= total
        }
        let outcomes = PipelineHarness.outcomes(registry)
        #expect(finished && outcomes.total == produced, "\(outcomes) of \(produced)")
        #expect(outcomes[.abandoned, default: 0] == 0 && outcomes[.expired, default: 0] == 0, "\(outcomes)")

        // The healthy app rang every call, through many connections; the failing app's events before the reload are
        // dead letters with the credential reason (a push already on its way during the reload may ring), and every
        // one after it rang.
        let delivered = Dictionary(grouping: server.recorder.entries.filter { $0.status == 200 }) {
            $0.headers.first { $0.name == "apns-collapse-id" }?.value.first ?? "?"
        }
        let mainRang = Set(delivered["m", default: []].compactMap { $0.headers.first { $0.name == "apns-collapse-id" }?.value })
        #expect(mainRang.count == mainCalls, "\(mainRang.count) of \(mainCalls) healthy calls rang")
        let failingRang = delivered["f", default: []].count
        #expect(failingRang >= failingAfter && failingRang <= failingAfter + 5,
                "\(failingRang) failing-app pushes rang; \(failingAfter) were produced after the fix")
        // Every dead-lettered outcome wrote one record (on a loaded machine fewer batches fit in the failing window,
        // and a bound derived from them fell to zero: the read returned before any record had arrived).
        let dlq = try await harness.read(["calls.dlq"], atLeast: outcomes[.deadLettered, default: 0])
        #expect(dlq.count + failingRang == failingBefore + failingAfter, "\(dlq.count) dead letters")
        #expect(dlq.allSatisfy { MultiAppTests.header($0, "x-dlq-reason") == "apns_credentials" })
        let opened = registry.counter(APNsClientMetrics.connectionEvents, help: "",
                                      labels: ["credential": "KEY0000001", "endpoint": server.endpoint.description, "event": "opened"])
        #expect(opened.value >= Double(mainCalls * 2 / 200), "connections retired and were replaced: \(opened.value) opened")

        // The port answered every probe and scrape while the flood was evicted.
        #expect(probes.allSatisfy { $0 == "HTTP/1.1 200 OK" }, "\(Dictionary(grouping: probes) { $0 }.mapValues(\.count))")
        #expect(flood.opened.load(ordering: .relaxed) > 1000)
        #expect(registry.exposition().contains("callpush_telemetry_connections_evicted_total"))
        print("LongRunTransportTests: \(produced) events, \(outcomes); \(Int(opened.value)) connections opened for the healthy key; "
              + "\(dlq.count) dead letters; \(probes.count) probes; \(flood.opened.load(ordering: .relaxed)) flood connections")
        await worker.shutdown()
    }
}
