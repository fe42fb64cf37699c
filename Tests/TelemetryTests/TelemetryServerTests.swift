import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Telemetry

@Suite struct TelemetryServerTests {
    private func makeServer(
        timeout: Double = 5,
        ready: Bool = false
    ) throws -> (TelemetryServer, MetricsRegistry, ReadinessFlag) {
        var configuration = TelemetryServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.requestTimeout = .seconds(timeout)
        let registry = MetricsRegistry()
        let readiness = ReadinessFlag(ready: ready)
        let server = try TelemetryServer(configuration: configuration, registry: registry, readiness: readiness)
        return (server, registry, readiness)
    }

    @Test func metricsOverHTTPPassPromtool() throws {
        let (server, registry, _) = try makeServer()
        defer { server.stop() }
        registry.counter("callpush_http_test_total", help: "Test counter.", labels: ["path": "/x"]).increment()
        registry.gauge("callpush_http_test_open", help: "Test gauge.").set(3)
        registry.histogram("callpush_http_test_seconds", help: "Test histogram.", labels: ["k": "v"]).observe(0.1)
        let response = try RawHTTPClient.request(port: server.port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 200 OK")
        #expect(response.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        #expect(response.body == registry.exposition())
        let check = try PromtoolCheck.run(response.body)
        #expect(check.status == 0, "promtool: \(check.output)")
    }

    @Test func healthAndReadiness() throws {
        let (server, _, readiness) = try makeServer()
        defer { server.stop() }
        let health = try RawHTTPClient.request(port: server.port, "GET /healthz HTTP/1.1\r\n\r\n")
        #expect(health.statusLine == "HTTP/1.1 200 OK")
        let notReady = try RawHTTPClient.request(port: server.port, "GET /readyz HTTP/1.1\r\n\r\n")
        #expect(notReady.statusLine == "HTTP/1.1 503 Service Unavailable")
        readiness.set(true)
        let ready = try RawHTTPClient.request(port: server.port, "GET /readyz?verbose=1 HTTP/1.0\r\n\r\n")
        #expect(ready.statusLine == "HTTP/1.1 200 OK")
        #expect(ready.body == "ready\n")
    }

    @Test func headHasNoBody() throws {
        let (server, _, _) = try makeServer()
        defer { server.stop() }
        let response = try RawHTTPClient.request(port: server.port, "HEAD /healthz HTTP/1.1\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 200 OK")
        #expect(response.contains("Content-Length: 3\r\n"))
        #expect(response.body.isEmpty)
    }

    @Test(arguments: [
        ("GET /nope HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found"),
        ("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 405 Method Not Allowed"),
        ("DELETE /healthz HTTP/1.1\r\n\r\n", "HTTP/1.1 405 Method Not Allowed"),
        ("hello there\r\n\r\n", "HTTP/1.1 400 Bad Request"),
        ("GET /metrics SPDY/3\r\n\r\n", "HTTP/1.1 400 Bad Request"),
        ("GET metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"),
        ("\u{01}\u{02}\u{03}\r\n\r\n", "HTTP/1.1 400 Bad Request"),
    ])
    func rejectsWhatItDoesNotServe(request: String, status: String) throws {
        let (server, _, _) = try makeServer()
        defer { server.stop() }
        let response = try RawHTTPClient.request(port: server.port, request)
        #expect(response.statusLine == status)
        if status.contains("405") { #expect(response.contains("Allow: GET, HEAD\r\n")) }
    }

    @Test func oversizedHeadIsRefused() throws {
        let (server, _, _) = try makeServer()
        defer { server.stop() }
        let padding = String(repeating: "a", count: 9000)
        let response = try RawHTTPClient.request(port: server.port, "GET /metrics HTTP/1.1\r\nX-Pad: \(padding)\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 431 Request Header Fields Too Large")
    }

    @Test func slowClientsDoNotBlockOthersAndTimeOut() throws {
        let (server, _, _) = try makeServer(timeout: 3)
        defer { server.stop() }
        let slow = try RawHTTPClient(port: server.port)
        slow.send("GET /heal")  // never finishes its request
        let started = Date()
        let fast = try RawHTTPClient.request(port: server.port, "GET /healthz HTTP/1.1\r\n\r\n")
        #expect(fast.statusLine == "HTTP/1.1 200 OK")
        #expect(Date().timeIntervalSince(started) < 3, "answered before the slow client's 3 s timeout, not after it")
        #expect(slow.readAll().statusLine == "HTTP/1.1 408 Request Timeout")
    }

    @Test func clientThatConnectsAndLeavesIsHarmless() throws {
        let (server, _, _) = try makeServer()
        defer { server.stop() }
        for _ in 0..<20 { _ = try RawHTTPClient(port: server.port) }
        let response = try RawHTTPClient.request(port: server.port, "GET /healthz HTTP/1.1\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 200 OK")
    }

    /// 300 connections held open (half idle, half with a half-sent request) against a cap of 64 and a request
    /// timeout far beyond the client's 10 s receive timeout: without eviction no probe would be answered.
    @Test func heldConnectionsAreEvictedSoProbesAndScrapesAnswer() throws {
        let (server, _, readiness) = try makeServer(timeout: 600)
        defer { server.stop() }
        readiness.set(true)
        var held: [RawHTTPClient] = []
        for index in 0..<300 {
            let client = try RawHTTPClient(port: server.port)
            if index % 2 == 1 { client.send("GET /metr") }
            held.append(client)
        }
        for path in ["/healthz", "/readyz"] {
            let response = try RawHTTPClient.request(port: server.port, "GET \(path) HTTP/1.1\r\n\r\n")
            #expect(response.statusLine == "HTTP/1.1 200 OK", "\(path)")
        }
        let metrics = try RawHTTPClient.request(port: server.port, "GET /metrics HTTP/1.1\r\n\r\n")
        #expect(metrics.statusLine == "HTTP/1.1 200 OK")
        let evicted = ExpositionSeries.value("callpush_telemetry_connections_evicted_total", in: metrics.body)
        #expect((evicted ?? 0) >= 236, "\(evicted.map { "\($0) evicted" } ?? "no eviction counter")")
        // The oldest held connection was closed without an answer; the newest is still open.
        #expect(held[0].readAll().isEmpty)
        #expect(held[299].isOpenWithoutData)
    }

    /// A flood of new connections that send nothing (thousands, from two threads) while probes connect and send their
    /// request at once, as kubelet does: every probe is answered. A waiting connection's request is read before it
    /// can be evicted, so the flood behind a probe does not push it out; and an evicted connection's fd, reused by a
    /// newer one, never gets the older one's poll flags.
    @Test func aFloodOfNewConnectionsDoesNotEvictProbes() throws {
        let (server, _, readiness) = try makeServer(timeout: 600)
        defer { server.stop() }
        readiness.set(true)
        let stop = Atomic<Bool>(false)
        let opened = Atomic<Int>(0)
        let flooders = (0..<2).map { _ in
            Thread {
                var held: [RawHTTPClient] = []
                while !stop.load(ordering: .relaxed) && held.count < 3000 {
                    if let client = try? RawHTTPClient(port: server.port) {
                        held.append(client)
                        opened.add(1, ordering: .relaxed)
                    }
                }
                while !stop.load(ordering: .relaxed) { usleep(1000) }  // holds its connections until the probes are done
            }
        }
        for flooder in flooders { flooder.start() }
        // The probes start once the flood fills the server's 64 connections several times over.
        Eventually.blockingWaitUntil(timeout: .seconds(20), interval: .milliseconds(1)) { opened.load(ordering: .relaxed) >= 300 }
        var answers: [String] = []
        for index in 0..<60 {
            let path = index % 2 == 0 ? "/healthz" : "/readyz"
            answers.append((try? RawHTTPClient.request(port: server.port, "GET \(path) HTTP/1.1\r\n\r\n").statusLine) ?? "no connection")
        }
        stop.store(true, ordering: .relaxed)
        #expect(answers.allSatisfy { $0 == "HTTP/1.1 200 OK" }, "\(Dictionary(grouping: answers) { $0 }.mapValues(\.count))")
        let metrics = try RawHTTPClient.request(port: server.port, "GET /metrics HTTP/1.1\r\n\r\n")
        #expect((ExpositionSeries.value("callpush_telemetry_connections_evicted_total", in: metrics.body) ?? 0) >= 200,
                "the flood was evicted")
    }

    @Test func badBindAddressIsAClearError() {
        var configuration = TelemetryServerConfiguration()
        configuration.host = "not-an-address"
        #expect(throws: TelemetryServerError.self) {
            _ = try TelemetryServer(configuration: configuration, registry: MetricsRegistry(), readiness: ReadinessFlag())
        }
    }
}
