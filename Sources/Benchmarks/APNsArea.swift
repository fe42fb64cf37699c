import BenchSupport
import APNsMock
import ToolSupport

/// Area `apns`: ``APNsThroughputBenchmark``: APNsClient (closed loop, 100 pushes outstanding per connection) vs
/// h2load posting the same push, each against a fresh mock APNs server, over 1, 2 and 4 connections.
enum APNsArea {
    static let connectionCounts = [1, 2, 4]

    static func run(_ options: BenchOptions, connectionCounts: [Int] = connectionCounts) async -> AreaResult {
        var result = AreaResult()
        guard let tools = ExternalTool.require(["h2load"], for: "apns area") else { return result }
        let duration = Duration.seconds(max(1, Int(options.seconds.rounded())))
        for connections in connectionCounts {
            var client: [Double] = []
            var reference: [Double] = []
            var failures = 0
            for _ in 0..<options.repetitions {
                do {
                    let concurrency = connections * 100
                    let server = try APNsThroughputBenchmark.makeServer()
                    let ours = try await APNsThroughputBenchmark.measureClient(
                        server: server, connections: connections, concurrency: concurrency, duration: duration)
                    server.stop()
                    let server2 = try APNsThroughputBenchmark.makeServer()
                    let h2load = try APNsThroughputBenchmark.measureH2Load(
                        server: server2, connections: connections, concurrency: concurrency, duration: duration,
                        h2loadPath: tools["h2load"]!)
                    server2.stop()
                    client.append(ours.pushesPerSecond)
                    reference.append(h2load.pushesPerSecond)
                    failures += ours.failures + h2load.failures
                } catch {
                    print("  FAILED \(connections) connection(s): \(error)")
                }
            }
            guard !client.isEmpty else { continue }
            print("  \(connections) connection(s): APNsClient \(BenchFormat.rate(Median.of(client))), "
                + "h2load \(BenchFormat.rate(Median.of(reference))), non-200 answers \(failures)")
            result.apnsClientPerSecond[connections] = Median.of(client)
            result.report(BenchRatio(area: .apns, name: "APNsClient pushes/s vs h2load, \(connections) conn",
                                     value: Median.of(client), reference: Median.of(reference), target: nil))
        }
        return result
    }
}
