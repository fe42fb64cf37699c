import BenchSupport
import APNs
import APNsMock
import Foundation
import ToolSupport

/// Area `peers`: against one `callpush mock-apns` process with a real key, (1) APNsClient vs aioapns (PyPI's
/// asyncio APNs client, through `scripts/aioapns-push.py`), same key, same connection limit; (2) the streams ÷ RTT
/// law: with `--latency-ms 50` and `--max-streams 100`, APNsClient's pushes/s over C connections against
/// 0.8 × C × 100 ÷ 0.05 s (the pool must keep the streams full at a real-world round-trip time).
enum PeersArea {
    static let connections = 2
    static let latencySeconds = 0.05
    static let latencyStreams = 100

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        let bed: MockAPNsBed
        do { bed = try MockAPNsBed.make() } catch {
            print("  FAILED peers area: \(error)")
            return result
        }
        defer { bed.remove() }
        let duration = Duration.milliseconds(Int(options.seconds * 1000))
        let credentials = APNsCredentials.token(keyPath: bed.keyPath, keyID: MockAPNsBed.keyID, teamID: MockAPNsBed.teamID)
        let certificateOptions = ["--certificate", bed.certificate.certificatePath,
                                  "--private-key", bed.certificate.privateKeyPath]
        var ours: [Double] = []
        var theirs: [Double] = []
        var bounded: [Double] = []
        for _ in 0..<options.repetitions {
            do {
                let (mock, port) = try bed.startMock(certificateOptions)
                let endpoint = APNsEndpoint.custom(host: "127.0.0.1", port: port, caFile: bed.certificate.certificatePath)
                let client = try await APNsThroughputBenchmark.measureClient(
                    endpoint: endpoint, credentials: credentials, connections: connections,
                    concurrency: connections * 100, duration: duration)
                ours.append(client.pushesPerSecond)
                if let aioapns = try runAioapns(bed: bed, port: port, pushes: max(2000, Int(options.seconds * 2000))) {
                    theirs.append(aioapns)
                }
                mock.terminate(grace: .seconds(1))
                let (slow, slowPort) = try bed.startMock(certificateOptions + [
                    "--latency-ms", String(Int(latencySeconds * 1000)), "--max-streams", String(latencyStreams),
                ])
                let slowEndpoint = APNsEndpoint.custom(host: "127.0.0.1", port: slowPort,
                                                       caFile: bed.certificate.certificatePath)
                let law = try await APNsThroughputBenchmark.measureClient(
                    endpoint: slowEndpoint, credentials: credentials, connections: connections,
                    concurrency: connections * latencyStreams * 2, duration: duration)
                slow.terminate(grace: .seconds(1))
                bounded.append(law.pushesPerSecond)
            } catch {
                print("  FAILED peers: \(error)")
            }
        }
        if !ours.isEmpty, !theirs.isEmpty {
            print("  \(connections) connection(s): APNsClient \(BenchFormat.rate(Median.of(ours))), "
                + "aioapns \(BenchFormat.rate(Median.of(theirs)))")
            result.report(BenchRatio(area: .peers, name: "APNsClient pushes/s vs aioapns, \(connections) conn",
                                     value: Median.of(ours), reference: Median.of(theirs), target: .atLeast(20)))
        }
        if !bounded.isEmpty {
            let law = 0.8 * Double(connections * latencyStreams) / latencySeconds
            print("  --latency-ms \(Int(latencySeconds * 1000)) --max-streams \(latencyStreams), \(connections) conn: "
                + "APNsClient \(BenchFormat.rate(Median.of(bounded))), 0.8 × C × streams ÷ RTT = \(BenchFormat.rate(law))")
            result.report(BenchRatio(area: .peers, name: "APNsClient pushes/s vs 0.8 × streams ÷ 50 ms RTT",
                                     value: Median.of(bounded), reference: law, target: .atLeast(1.0)))
        }
        return result
    }

    /// Runs `scripts/aioapns-push.py` (found from the package root, the working directory of `make bench`); nil
    /// after a SKIP line when python3 or aioapns is missing.
    private static func runAioapns(bed: MockAPNsBed, port: Int, pushes: Int) throws -> Double? {
        let script = FileManager.default.currentDirectoryPath + "/scripts/aioapns-push.py"
        guard FileManager.default.fileExists(atPath: script) else {
            print("  SKIP aioapns: run from the package root (\(script) not found)")
            return nil
        }
        // The venv `make test-deps` makes (Debian's own python3 refuses pip installs), else python3 on PATH.
        let venv = FileManager.default.currentDirectoryPath + "/.build/python/bin/python3"
        let python = FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3"
        let process = try ChildProcess([
            python, script, "--endpoint", "127.0.0.1:\(port)", "--ca-file", bed.certificate.certificatePath,
            "--key-file", bed.keyPath, "--key-id", MockAPNsBed.keyID, "--team-id", MockAPNsBed.teamID,
            "--count", String(pushes), "--concurrency", "100", "--connections", String(connections),
        ])
        process.wait(timeout: .seconds(300))
        let output = process.log
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let summary = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let rate = summary["pushes_per_second"] as? Double
        else {
            print("  SKIP aioapns: no result (make test-deps installs it): \(output.suffix(300))")
            return nil
        }
        if let statuses = summary["statuses"] as? [String: Int], statuses.keys.contains(where: { $0 != "200" }) {
            print("  aioapns answers: \(statuses)")
        }
        return rate
    }
}
