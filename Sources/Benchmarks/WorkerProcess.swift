import Foundation
import Glibc
import Telemetry
import ToolSupport

/// `callpush run` as a process of its own, with its `/metrics` on a loopback port: what the `worker` area reads
/// from it (readiness, final outcomes) and its CPU time from `/proc/<pid>/stat`.
struct WorkerProcess {
    let process: ChildProcess
    let metricsPort: Int

    /// Starts `callpush run` with `arguments` plus a metrics server on a free loopback port.
    static func start(callpushPath: String, arguments: [String]) throws(BenchFailure) -> WorkerProcess {
        let port = FreePort.next()
        let process = try BenchFailure.starting(
            ChildProcess(["run"] + arguments + [
                "--metrics-host", "127.0.0.1", "--metrics-port", String(port), "--log-level", "error",
            ], executable: callpushPath))
        return WorkerProcess(process: process, metricsPort: port)
    }

    /// Waits until the worker reports `callpush_ready 1` (partitions assigned).
    func waitUntilReady(timeout: Duration) async throws(BenchFailure) {
        let deadline = ContinuousClock.now + timeout
        while !(scrape()?.contains("\ncallpush_ready 1\n") ?? false) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                throw BenchFailure("callpush run did not become ready: \(process.log.suffix(300))")
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The sum of `callpush_outcomes_total` over every outcome, nil when `/metrics` does not answer.
    var finalOutcomes: Int? {
        guard let text = scrape() else { return nil }
        var sum = 0.0
        for line in text.split(separator: "\n") where line.hasPrefix("callpush_outcomes_total{") {
            sum += line.split(separator: " ").last.flatMap { Double($0) } ?? 0
        }
        return Int(sum)
    }

    /// Waits until the first outcomes are final (looking every 10 ms), then reads the final outcomes and the CPU time
    /// together: the start of a span that leaves out start-up and the group join.
    /// - Throws: ``BenchFailure`` when the worker stops or `timeout` passes first.
    func firstFinalOutcomes(timeout: Duration) async throws(BenchFailure)
        -> (outcomes: Int, cpu: CPUReading, at: ContinuousClock.Instant)
    {
        let deadline = ContinuousClock.now + timeout
        while true {
            let at = ContinuousClock.now
            let cpu = cpuReading
            if let outcomes = finalOutcomes, outcomes > 0, let cpu { return (outcomes, cpu, at) }
            guard at < deadline, process.isRunning else {
                throw BenchFailure("callpush run reached no final outcome: \(process.log.suffix(300))")
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until `count` outcomes are final. Each look is a `/metrics` exposition, which costs the worker CPU and
    /// would be counted in its CPU per event, so it looks again after half the time the rate seen so far needs for the
    /// rest, between 10 and 250 ms: a dozen scrapes per run, and the end is still seen within about 10 ms.
    /// - Throws: ``BenchFailure`` when the worker stops or `timeout` passes first.
    func waitForFinalOutcomes(_ count: Int, timeout: Duration) async throws(BenchFailure) {
        let deadline = ContinuousClock.now + timeout
        var last: (count: Int, at: ContinuousClock.Instant)?
        while true {
            let now = ContinuousClock.now
            let done = finalOutcomes ?? 0
            if done >= count { return }
            guard now < deadline, process.isRunning else {
                throw BenchFailure("only \(done) of \(count) events reached a final outcome")
            }
            var wait = 0.1
            if let last, done > last.count {
                let rate = Double(done - last.count) / (now - last.at).inSeconds
                wait = min(0.25, max(0.01, Double(count - done) / rate / 2))
            }
            last = (done, now)
            try? await Task.sleep(for: .seconds(wait))
        }
    }

    /// The value of an unlabelled gauge or counter `name` (e.g. `callpush_inflight_events`), nil when `/metrics`
    /// does not answer or has no such line.
    func metric(_ name: String) -> Double? {
        guard let text = scrape() else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return line.split(separator: " ").last.flatMap { Double($0) }
        }
        return nil
    }

    /// The worker's CPU seconds so far, in all and per group of its threads (``ThreadName/group(_:)``:
    /// `kafka-consume`, `http2-loop`, `kafka-produce`, `librdkafka`, …), from one ``ProcessStatistics`` reading.
    struct CPUReading {
        let total: Double
        let threads: [String: Double]
    }

    /// Nil when the worker's `/proc` entry cannot be read.
    var cpuReading: CPUReading? {
        guard let reading = ProcessStatistics.read(process: String(process.pid)) else { return nil }
        return CPUReading(total: reading.cpuSeconds, threads: reading.threads.reduce(into: [:]) { groups, thread in
            groups[ThreadName.group(thread.name), default: 0] += thread.cpuSeconds
        })
    }

    /// `GET /metrics` over HTTP/1.0: the body, or nil when the server does not answer.
    private func scrape() -> String? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(metricsPort).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return nil }
        let request = Array("GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            response.append(contentsOf: buffer[..<count])
        }
        return response.isEmpty ? nil : String(decoding: response, as: UTF8.self)
    }
}
