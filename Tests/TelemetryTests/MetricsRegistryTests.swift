import Foundation
import Testing

@testable import Telemetry

@Suite struct MetricsRegistryTests {
    @Test func goldenExposition() {
        let registry = MetricsRegistry()
        registry.counter("callpush_events_consumed_total", help: "Events consumed.", labels: ["topic": "calls"])
            .increment(by: 3)
        registry.counter("callpush_events_consumed_total", help: "Events consumed.", labels: ["topic": "calls.retry.5s"])
            .increment()
        registry.gauge("callpush_inflight_events", help: "Events in flight.").set(7)
        let histogram = registry.histogram(
            "callpush_apns_request_duration_seconds", help: "APNs request duration.", labels: ["connection": "0"],
            buckets: [0.01, 0.1, 1]
        )
        histogram.observe(0.005)
        histogram.observe(0.05)
        histogram.observe(0.05)
        histogram.observe(5)
        let expected = """
            # HELP callpush_events_consumed_total Events consumed.
            # TYPE callpush_events_consumed_total counter
            callpush_events_consumed_total{topic="calls"} 3
            callpush_events_consumed_total{topic="calls.retry.5s"} 1
            # HELP callpush_inflight_events Events in flight.
            # TYPE callpush_inflight_events gauge
            callpush_inflight_events 7
            # HELP callpush_apns_request_duration_seconds APNs request duration.
            # TYPE callpush_apns_request_duration_seconds histogram
            callpush_apns_request_duration_seconds_bucket{connection="0",le="0.01"} 1
            callpush_apns_request_duration_seconds_bucket{connection="0",le="0.1"} 3
            callpush_apns_request_duration_seconds_bucket{connection="0",le="1"} 3
            callpush_apns_request_duration_seconds_bucket{connection="0",le="+Inf"} 4
            callpush_apns_request_duration_seconds_sum{connection="0"} 5.105
            callpush_apns_request_duration_seconds_count{connection="0"} 4

            """
        #expect(registry.exposition() == expected)
    }

    @Test func escapesLabelValuesAndHelp() {
        let registry = MetricsRegistry()
        registry.counter("x_total", help: "line one\nback\\slash", labels: ["reason": "say \"hi\"\nnow\\"]).increment()
        let text = registry.exposition()
        #expect(text.contains("# HELP x_total line one\\nback\\\\slash\n"))
        #expect(text.contains("x_total{reason=\"say \\\"hi\\\"\\nnow\\\\\"} 1\n"))
        // "\r\n" is one Character: its "\n" is escaped all the same (the carriage return needs no escape).
        registry.counter("y_total", help: "crlf\r\nhelp", labels: ["reason": "a\r\nb"]).increment()
        let crlf = registry.exposition()
        #expect(crlf.contains("# HELP y_total crlf\r\\nhelp\n"))
        #expect(crlf.contains("y_total{reason=\"a\r\\nb\"} 1\n"))
    }

    @Test func sameNameAndLabelsGiveTheSameHandle() {
        let registry = MetricsRegistry()
        let first = registry.counter("a_total", help: "a", labels: ["k": "v"])
        let second = registry.counter("a_total", help: "a", labels: ["k": "v"])
        first.increment()
        second.increment()
        #expect(first === second)
        #expect(first.value == 2)
    }

    @Test func removedSeriesDisappearAndEmptyFamiliesAreOmitted() {
        let registry = MetricsRegistry()
        registry.gauge("lag", help: "lag", labels: ["partition": "1"]).set(4)
        registry.remove("lag", labels: ["partition": "1"])
        #expect(registry.exposition() == "")
    }

    /// Every series carrying all the given labels goes, whatever its family and other labels; the rest stay, and a
    /// later registration of a removed series starts afresh.
    @Test func seriesAreRemovedByLabelAcrossFamilies() {
        let registry = MetricsRegistry()
        registry.counter("requests_total", help: "r", labels: ["credential": "A", "status": "200"]).increment()
        registry.counter("requests_total", help: "r", labels: ["credential": "B", "status": "200"]).increment()
        registry.gauge("connections", help: "c", labels: ["credential": "A", "endpoint": "x"]).set(2)
        registry.histogram("duration_seconds", help: "d", labels: ["credential": "A"], buckets: [1]).observe(0.5)
        registry.counter("other_total", help: "o", labels: ["credentialish": "A"]).increment()
        #expect(registry.removeSeries(labelled: ["credential": "A"]) == 3)
        #expect(registry.exposition() == """
            # HELP requests_total r
            # TYPE requests_total counter
            requests_total{credential="B",status="200"} 1
            # HELP other_total o
            # TYPE other_total counter
            other_total{credentialish="A"} 1

            """)
        #expect(registry.removeSeries(labelled: ["credential": "A"]) == 0)
        #expect(registry.counter("requests_total", help: "r", labels: ["credential": "A", "status": "200"]).value == 0)
    }

    @Test func collectorsRunBeforeExposition() {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("derived", help: "derived")
        registry.addCollector { gauge.set(42) }
        #expect(registry.exposition().contains("derived 42\n"))
    }

    @Test func concurrentUpdatesGiveExactTotals() async {
        let registry = MetricsRegistry()
        let counter = registry.counter("hits_total", help: "hits")
        let histogram = registry.histogram("latency_seconds", help: "latency", buckets: [0.5, 1.5])
        let gauge = registry.gauge("level", help: "level")
        let threads = 8
        let perThread = 50_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                counter.increment()
                histogram.observe(Double(index % 3))  // 0, 1, 2 → one per bucket
                gauge.increment(by: 1)
                gauge.decrement(by: 0.5)
            }
            _ = thread
        }
        let total = Double(threads * perThread)
        #expect(counter.value == total)
        #expect(histogram.count == UInt64(total))
        #expect(histogram.sum == Double(threads) * Double((0..<perThread).reduce(0) { $0 + $1 % 3 }))
        #expect(gauge.value == total / 2)
        let buckets = histogram.cumulativeCounts
        #expect(buckets.count == 3)
        #expect(buckets[2] == UInt64(total))
        #expect(buckets[0] == UInt64(threads * ((perThread + 2) / 3)))
    }

    @Test func quantileEstimateInterpolatesInsideBuckets() {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("q_seconds", help: "q", buckets: [1, 2, 4])
        #expect(histogram.estimate(quantile: 0.5) == nil)
        for _ in 0..<50 { histogram.observe(0.5) }
        for _ in 0..<50 { histogram.observe(1.5) }
        #expect(histogram.estimate(quantile: 0.5) == 1)
        #expect(histogram.estimate(quantile: 0.75) == 1.5)
        #expect(histogram.estimate(quantile: 1) == 2)
    }

    @Test func promtoolAcceptsEveryMetricType() throws {
        let registry = MetricsRegistry()
        registry.counter("callpush_test_events_total", help: "Events.", labels: ["topic": "calls", "kind": "a\"b"])
            .increment(by: 2)
        registry.gauge("callpush_test_connections", help: "Connections.", labels: ["endpoint": "sandbox"]).set(2)
        registry.histogram("callpush_test_duration_seconds", help: "Duration.", labels: ["status": "200"])
            .observe(0.02)
        registry.counter("callpush_test_cpu_seconds_total", help: "CPU.").increment(by: 0.25)
        let result = try PromtoolCheck.run(registry.exposition())
        #expect(result.status == 0, "promtool: \(result.output)")
    }
}
