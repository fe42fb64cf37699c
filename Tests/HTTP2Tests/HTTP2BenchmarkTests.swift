import BenchSupport
import Foundation
import TestSupport
@testable import Runtime
@testable import TLS
@testable import HTTP2
@testable import HTTP2Server
import Testing

/// Throughput comparison with h2load / nghttpd. Off by default; run with
/// `HTTP2_BENCH=1 swift test -c release --filter HTTP2BenchmarkTests` (see scripts/http2-bench.sh).
@Suite("HTTP2 benchmark vs h2load/nghttpd", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["HTTP2_BENCH"] == "1"))
struct HTTP2BenchmarkTests {
    let certificates = TestCertificates.shared

    private func h2load(_ url: String, requests: Int, connections: Int, streams: Int,
                        extra: [String] = []) throws -> (rps: Double, cpu: Double) {
        let start = rusageChildren()
        let arguments = ["h2load", "-n", String(requests), "-c", String(connections), "-m", String(streams), "-d", bodyFile()]
        let (_, output) = try ExternalTool.run(arguments + extra + [url], timeout: 120)
        let cpu = rusageChildren() - start
        let line = output.split(separator: "\n").first { $0.hasPrefix("finished in") } ?? ""
        let rps = Double(line.split(separator: " ").dropFirst(3).first ?? "0") ?? 0
        return (rps, cpu)
    }

    private func bodyFile() -> String {
        let path = certificates.directory + "/body.json"
        _ = FileManager.default.createFile(
            atPath: path,
            contents: Data(#"{"aps":{"alert":{"title":"Incoming call","body":"Alice"},"sound":"default"}}"#.utf8))
        return path
    }

    @Test(arguments: [(1, 100), (4, 100)])
    func clientVersusH2loadAgainstNghttpd(connections: Int, streams: Int) async throws {
        guard let (nghttpd, port) = try certificates.startNghttpd(extra: ["-m", "1000"]) else {
            Issue.record("nghttpd did not start")
            return
        }
        defer { nghttpd.kill() }
        let requests = 100_000
        let reference = try h2load("https://127.0.0.1:\(port)/3/device/x", requests: requests,
                                   connections: connections, streams: streams)
        let generator = HTTP2LoadGenerator(configuration: .init(
            port: port, tls: TLSClientConfiguration(caFile: certificates.certificateFile),
            connections: connections, streamsPerConnection: streams, totalRequests: requests, threads: 1))
        let ours = try await generator.run()
        let line = "client -c \(connections) -m \(streams): ours \(Int(ours.requestsPerSecond)) req/s "
            + "cpu/100k \(String(format: "%.3f", ours.cpuSecondsPer100k))s | h2load \(Int(reference.rps)) req/s "
            + "cpu/100k \(String(format: "%.3f", reference.cpu * 100_000 / Double(requests)))s | throughput ratio "
            + String(format: "%.2f", ours.requestsPerSecond / reference.rps) + " cpu ratio "
            + String(format: "%.2f", ours.cpuSecondsPer100k / (reference.cpu * 100_000 / Double(requests)))
        print("BENCH " + line)
        #expect(ours.failed == 0)  // nghttpd answers 404 (no such file): still a complete response
    }

    /// Same comparison, but both clients send the same request (path, authority, header fields, body), so nghttpd
    /// does the same work per request for both. `clientVersusH2loadAgainstNghttpd` above compares our APNs-shaped
    /// request (64-hex device path, apns-topic, apns-push-type, content-type) with h2load's smaller default one,
    /// which costs nghttpd less per request. Shapes: "h2load" (h2load's default request) and "apns" (h2load is given
    /// our path and headers with -H).
    @Test(arguments: [("h2load", 1, 100), ("h2load", 4, 100), ("apns", 1, 100), ("apns", 4, 100)])
    func clientVersusH2loadSameRequest(shape: String, connections: Int, streams: Int) async throws {
        guard let (nghttpd, port) = try certificates.startNghttpd(extra: ["-m", "1000"]) else {
            Issue.record("nghttpd did not start")
            return
        }
        defer { nghttpd.kill() }
        let requests = 100_000
        let body = Array(#"{"aps":{"alert":{"title":"Incoming call","body":"Alice"},"sound":"default"}}"#.utf8)
        let apnsHeaders = [HTTP2Header("apns-topic", "com.example.app"), HTTP2Header("apns-push-type", "alert"),
                           HTTP2Header("content-type", "application/json")]
        let path = shape == "apns" ? "/3/device/" + String(repeating: "ab", count: 32) : "/3/device/x"
        let extra = shape == "apns" ? apnsHeaders.flatMap { ["-H", "\($0.name): \($0.value)"] } : []
        let reference = try h2load("https://127.0.0.1:\(port)" + path, requests: requests,
                                   connections: connections, streams: streams, extra: extra)
        // h2load sends :path literal (never indexed by nghttp2's encoder either), user-agent and content-length.
        let request = HTTP2Request(path: path, authority: "127.0.0.1:\(port)",
                                   headers: (shape == "apns" ? apnsHeaders : [])
                                       + [HTTP2Header("user-agent", "h2load nghttp2/1.52.0"),
                                          HTTP2Header("content-length", String(body.count))],
                                   body: body, neverIndexPath: false)
        let generator = HTTP2LoadGenerator(configuration: .init(
            port: port, tls: TLSClientConfiguration(caFile: certificates.certificateFile),
            connections: connections, streamsPerConnection: streams, totalRequests: requests, threads: 1,
            request: request))
        let ours = try await generator.run()
        let line = "client (same \(shape) request) -c \(connections) -m \(streams): ours \(Int(ours.requestsPerSecond)) "
            + "req/s cpu/100k \(String(format: "%.3f", ours.cpuSecondsPer100k))s | h2load \(Int(reference.rps)) req/s "
            + "cpu/100k \(String(format: "%.3f", reference.cpu * 100_000 / Double(requests)))s | throughput ratio "
            + String(format: "%.2f", ours.requestsPerSecond / reference.rps) + " cpu ratio "
            + String(format: "%.2f", ours.cpuSecondsPer100k / (reference.cpu * 100_000 / Double(requests)))
        print("BENCH " + line)
        #expect(ours.failed == 0)
    }

    /// Submitting from a non-loop thread (the APNs client's path): 50 000 requests in bursts of 100, against nghttpd.
    @Test func crossThreadSubmission() async throws {
        guard let (nghttpd, port) = try certificates.startNghttpd(extra: ["-m", "1000"]) else {
            Issue.record("nghttpd did not start")
            return
        }
        defer { nghttpd.kill() }
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        var configuration = HTTP2ClientConfiguration()
        configuration.maxConcurrentStreams = 100
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: port, tls: try TLSContext(client: TLSClientConfiguration(caFile: certificates.certificateFile)),
            configuration: configuration, on: group.next())
        defer { connection.close() }
        let total = 50_000
        let request = HTTP2LoadGenerator.Configuration(port: port).request
        let collector = ResultCollector(expected: total)
        let cpuStart = processCPUSeconds()
        let start = ContinuousClock.now
        for i in 0..<total {
            connection.submit(request) { collector.add($0) }
            if i % 100 == 99 { while connection.queuedRequests > 1000 { usleep(100) } }
        }
        let results = try #require(collector.wait(seconds: 60))
        let elapsed = ContinuousClock.now - start
        let cpu = processCPUSeconds() - cpuStart
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("BENCH cross-thread submit: \(Int(Double(total) / seconds)) req/s cpu/100k "
              + String(format: "%.3f", cpu * 100_000 / Double(total)) + "s")
        #expect(results.count == total)
    }

    @Test(arguments: [(1, 100), (4, 100)])
    func h2loadAgainstOurServerVersusNghttpd(connections: Int, streams: Int) async throws {
        guard let (nghttpd, port) = try certificates.startNghttpd(extra: ["-m", "1000"]) else {
            Issue.record("nghttpd did not start")
            return
        }
        let requests = 100_000
        let reference = try h2load("https://127.0.0.1:\(port)/3/device/x", requests: requests,
                                   connections: connections, streams: streams)
        nghttpd.kill()
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group) { _, responder in
            responder.respond(status: 200, headers: [HTTP2Header("apns-id", "00000000-0000-0000-0000-000000000000")])
        }
        defer { server.stop() }
        let ours = try h2load("https://127.0.0.1:\(server.port)/3/device/x", requests: requests,
                              connections: connections, streams: streams)
        print("BENCH server -c \(connections) -m \(streams): h2load→ours \(Int(ours.rps)) req/s | h2load→nghttpd "
              + "\(Int(reference.rps)) req/s | ratio " + String(format: "%.2f", ours.rps / reference.rps))
    }
}

func rusageChildren() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}
