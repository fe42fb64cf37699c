import BenchSupport
@testable import APNs
@testable import APNsMock
import Foundation
@testable import Telemetry
import Testing

@Suite(.timeLimit(.minutes(1))) struct APNsClientMetricsTests {
    typealias Fixture = APNsClientFixture

    @Test func exportsEverySeriesWithItsExactName() async throws {
        let token = Fixture.deviceToken(410)
        let fixture = try Fixture(faults: APNsMockFaults(unregisteredTokens: [token]))
        defer { fixture.shutdown() }
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
        #expect(await fixture.send(try Fixture.alert(token: token)).disposition == .tokenInvalid)
        let endpoint = fixture.server.endpoint.description
        let text = fixture.registry.exposition()
        #expect(text.contains(#"callpush_apns_requests_total{reason="Success",status="200"} 1"#))
        #expect(text.contains(#"callpush_apns_requests_total{reason="Unregistered",status="410"} 1"#))
        #expect(text.contains("callpush_apns_request_duration_seconds_count 2"))
        #expect(text.contains(#"callpush_apns_connections{endpoint="\#(endpoint)"} 1"#))
        #expect(text.contains(#"callpush_apns_streams_in_flight{endpoint="\#(endpoint)"} 0"#))
        #expect(text.contains(#"callpush_apns_stream_limit{connection="0",endpoint="\#(endpoint)"} 1000"#))
        #expect(text.contains("callpush_apns_jwt_refreshes_total 1"))
        #expect(text.contains(#"callpush_apns_connection_events_total{endpoint="\#(endpoint)",event="opened"} 1"#))
    }

    /// Reasons APNs does not document count under `reason="other"`: a server that makes up reasons (a proxy, one
    /// carrying ids) cannot grow the series without bound. Documented reasons keep their own series; the success series
    /// is there from the start, at 0 until the first success.
    @Test func undocumentedReasonsCountAsOther() throws {
        let registry = MetricsRegistry()
        let metrics = APNsClientMetrics(registry: registry)
        for index in 0..<50 {
            metrics.recordAnswer(APNsResult(status: 400, headers: [], body: Array(#"{"reason":"Made-up-\#(index)"}"#.utf8)), seconds: 0.01)
        }
        metrics.recordAnswer(APNsResult(status: 400, headers: [], body: Array(#"{"reason":"BadTopic"}"#.utf8)), seconds: 0.01)
        metrics.recordAnswer(APNsResult.transportFailure(reason: .timeout, id: nil), seconds: 10)
        let series = registry.exposition().split(separator: "\n").filter { $0.hasPrefix("callpush_apns_requests_total{") }
        #expect(series.sorted() == [
            #"callpush_apns_requests_total{reason="BadTopic",status="400"} 1"#,
            #"callpush_apns_requests_total{reason="Success",status="200"} 0"#,
            #"callpush_apns_requests_total{reason="Timeout",status="none"} 1"#,
            #"callpush_apns_requests_total{reason="other",status="400"} 50"#,
        ])
    }

    @Test func transportFailuresCountWithStatusNone() async throws {
        let fixture = try Fixture(requestTimeout: .milliseconds(300), faults: APNsMockFaults(stallProbability: 1))
        defer { fixture.shutdown() }
        #expect(await fixture.send(try Fixture.alert()).reason == "Timeout")
        #expect(fixture.client.metrics.requestCount(status: "none", reason: "Timeout") == 1)
    }

    @Test func throughputDriverMeasuresClientAndH2Load() async throws {
        let server = try APNsThroughputBenchmark.makeServer()
        defer { server.stop() }
        let client = try await APNsThroughputBenchmark.measureClient(
            server: server, connections: 1, concurrency: 20, duration: .milliseconds(500))
        #expect(client.pushes > 0)
        #expect(client.failures == 0)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/h2load") else { return }
        let h2load = try APNsThroughputBenchmark.measureH2Load(
            server: server, connections: 1, concurrency: 20, duration: .seconds(1))
        #expect(h2load.pushes > 0)
        #expect(h2load.failures == 0)
    }
}
