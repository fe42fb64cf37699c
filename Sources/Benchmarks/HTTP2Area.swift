import BenchSupport
import Foundation
import Runtime
import TLS
import HTTP2
import HTTP2Server
import ToolSupport

/// Area `http2`: our client → nghttpd vs h2load → nghttpd, and h2load → our `HTTP2Server` vs h2load → nghttpd,
/// at `-c 1 -m 100` and `-c 4 -m 100`, with CPU seconds per 100k requests. One h2load → nghttpd run per
/// configuration is the reference for both comparisons.
enum HTTP2Area {
    static let configurations = [(connections: 1, streams: 100), (connections: 4, streams: 100)]
    /// The headers ``HTTP2LoadGenerator`` sends by default, so h2load posts the same request.
    static let headers = ["apns-topic: com.example.app", "apns-push-type: alert", "content-type: application/json"]
    static let path = "/3/device/" + String(repeating: "ab", count: 32)

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        guard let tools = ExternalTool.require(["h2load", "nghttpd"], for: "http2 area") else { return result }
        let certificate: BenchCertificate
        do { certificate = try BenchCertificate.make() } catch {
            print("  FAILED http2 area: cannot write a certificate: \(error)")
            return result
        }
        defer { certificate.remove() }
        let h2load = H2Load(path: tools["h2load"]!)
        for (connections, streams) in configurations {
            var samples = Samples()
            for _ in 0..<options.repetitions {
                do {
                    try await measureOnce(connections: connections, streams: streams, seconds: options.seconds,
                                          h2load: h2load, nghttpdPath: tools["nghttpd"]!, certificate: certificate,
                                          into: &samples)
                } catch {
                    print("  FAILED -c \(connections) -m \(streams): \(error)")
                }
            }
            guard !samples.reference.isEmpty else { continue }
            let label = "-c \(connections) -m \(streams)"
            print("  \(label): h2load→nghttpd \(BenchFormat.rate(Median.of(samples.reference))) "
                + "(cpu/100k \(BenchFormat.seconds(Median.of(samples.referenceCPU))))")
            if !samples.client.isEmpty {
                print("  \(label): client→nghttpd \(BenchFormat.rate(Median.of(samples.client))) "
                    + "(cpu/100k \(BenchFormat.seconds(Median.of(samples.clientCPU))), failed \(samples.clientFailures))")
                result.report(BenchRatio(area: .http2, name: "client req/s vs h2load \(label)",
                                         value: Median.of(samples.client), reference: Median.of(samples.reference),
                                         target: .atLeast(1.0)))
                result.report(BenchRatio(area: .http2, name: "client cpu/req vs h2load \(label)",
                                         value: Median.of(samples.clientCPU), reference: Median.of(samples.referenceCPU),
                                         target: .atMost(1.2)))
            }
            if !samples.server.isEmpty {
                print("  \(label): h2load→our server \(BenchFormat.rate(Median.of(samples.server))) "
                    + "(server cpu/100k \(BenchFormat.seconds(Median.of(samples.serverCPU))), nghttpd "
                    + "\(BenchFormat.seconds(Median.of(samples.nghttpdCPU))))")
                result.report(BenchRatio(area: .http2, name: "server req/s vs nghttpd \(label)",
                                         value: Median.of(samples.server), reference: Median.of(samples.reference),
                                         target: .atLeast(1.0)))
                result.report(BenchRatio(area: .http2, name: "server cpu/req vs nghttpd \(label)",
                                         value: Median.of(samples.serverCPU), reference: Median.of(samples.nghttpdCPU),
                                         target: nil))
            }
        }
        return result
    }

    /// Per-configuration samples over repetitions.
    struct Samples {
        var reference: [Double] = []
        var referenceCPU: [Double] = []
        var nghttpdCPU: [Double] = []
        var client: [Double] = []
        var clientCPU: [Double] = []
        var clientFailures = 0
        var server: [Double] = []
        var serverCPU: [Double] = []
    }

    private static func measureOnce(
        connections: Int, streams: Int, seconds: Double, h2load: H2Load, nghttpdPath: String,
        certificate: BenchCertificate, into samples: inout Samples
    ) async throws(BenchFailure) {
        // Reference: h2load → nghttpd (a fresh nghttpd, so its CPU time is this run's).
        let nghttpd = try Nghttpd.start(path: nghttpdPath, certificate: certificate)
        let reference = try h2load.run(url: "https://127.0.0.1:\(nghttpd.port)\(path)", connections: connections,
                                       streams: streams, seconds: seconds, bodyPath: certificate.bodyPath,
                                       headers: headers)
        let nghttpdCPU = nghttpd.stop()
        samples.reference.append(reference.requestsPerSecond)
        samples.referenceCPU.append(reference.cpuSecondsPer100k)
        samples.nghttpdCPU.append(reference.done > 0 ? nghttpdCPU * 100_000 / Double(reference.done) : 0)

        // Our client → nghttpd, same connections and streams, one event loop thread like h2load -t 1.
        let target = try Nghttpd.start(path: nghttpdPath, certificate: certificate)
        defer { target.stop() }
        let generator = HTTP2LoadGenerator(configuration: .init(
            port: target.port, tls: TLSClientConfiguration(caFile: certificate.certificatePath),
            connections: connections, streamsPerConnection: streams, duration: .milliseconds(Int(seconds * 1000)),
            threads: 1))
        let ours = try await BenchFailure.during("our client → nghttpd") { try await generator.run() }
        samples.client.append(ours.requestsPerSecond)
        samples.clientCPU.append(ours.cpuSecondsPer100k)
        samples.clientFailures += ours.failed

        // h2load → our server (one event loop thread, like nghttpd's single thread).
        let group = try await BenchFailure.during("our server's event loop") { try EventLoopGroup(numberOfThreads: 1) }
        defer { group.shutdown() }
        let tls = try await BenchFailure.during("our server's TLS context") {
            try TLSContext(server: TLSServerConfiguration(
                certificateFile: certificate.certificatePath, privateKeyFile: certificate.privateKeyPath))
        }
        let server = try await BenchFailure.during("our server") {
            try HTTP2Server(tls: tls, group: group) { _, responder in
                responder.respond(status: 200, headers: [HTTP2Header("apns-id", "00000000-0000-0000-0000-000000000000")])
            }
        }
        defer { server.stop() }
        let cpuBefore = processCPUSeconds()
        let served = try h2load.run(url: "https://127.0.0.1:\(server.port)\(path)", connections: connections,
                                    streams: streams, seconds: seconds, bodyPath: certificate.bodyPath,
                                    headers: headers)
        let serverCPU = processCPUSeconds() - cpuBefore
        samples.server.append(served.requestsPerSecond)
        samples.serverCPU.append(served.done > 0 ? serverCPU * 100_000 / Double(served.done) : 0)
    }
}
