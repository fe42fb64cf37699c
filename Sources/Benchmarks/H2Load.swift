import ToolSupport

/// One `h2load` run (single thread, POSTing the bench body) and its result, with the CPU time of the h2load
/// process itself from `wait4`.
struct H2Load {
    struct Result: Sendable {
        /// Requests completed (any status).
        var done: Int
        /// Responses with a 2xx status.
        var twoHundreds: Int
        var elapsedSeconds: Double
        var cpuSeconds: Double
        var requestsPerSecond: Double { elapsedSeconds > 0 ? Double(done) / elapsedSeconds : 0 }
        var cpuSecondsPer100k: Double { done > 0 ? cpuSeconds * 100_000 / Double(done) : 0 }
        var twoHundredsPerSecond: Double { elapsedSeconds > 0 ? Double(twoHundreds) / elapsedSeconds : 0 }

        /// A server's CPU seconds per 100k answered requests of this run.
        func cpuPer100k(serverSeconds: Double) -> Double {
            twoHundreds > 0 ? serverSeconds * 100_000 / Double(twoHundreds) : 0
        }
    }

    let path: String

    /// Runs `h2load -c connections -m streams -D seconds -t 1 -d body [headers] url`.
    /// - Throws: ``BenchFailure`` when h2load fails or prints no result.
    func run(url: String, connections: Int, streams: Int, seconds: Double, bodyPath: String,
             headers: [String] = []) throws(BenchFailure) -> Result {
        var arguments = ["-c", String(connections), "-m", String(streams), "-D", String(max(1, Int(seconds.rounded()))),
                         "-t", "1", "-d", bodyPath]
        for header in headers { arguments += ["-H", header] }
        arguments.append(url)
        let process = try BenchFailure.starting(ChildProcess(arguments, executable: path))
        process.wait(timeout: .seconds(seconds + 60))
        return try Self.parse(process.log, cpuSeconds: process.cpuSeconds)
    }

    /// Reads "finished in 3.00s, 41234.20 req/s, …", "requests: N total, N started, N done, N succeeded, …" and
    /// "status codes: N 2xx, …".
    static func parse(_ output: String, cpuSeconds: Double) throws(BenchFailure) -> Result {
        let lines = output.split(separator: "\n").map { $0.trimmingPrefix(while: { $0 == " " }) }
        guard let finished = lines.first(where: { $0.hasPrefix("finished in") }) else {
            throw BenchFailure("h2load gave no result: \(output.suffix(400))")
        }
        let words = finished.split(whereSeparator: { $0 == " " || $0 == "," })
        var elapsed = Double(words[2].dropLast()) ?? 0
        if words[2].hasSuffix("ms") { elapsed = (Double(words[2].dropLast(2)) ?? 0) / 1000 }
        var done = 0
        if let line = lines.first(where: { $0.hasPrefix("requests:") }) {
            for part in line.dropFirst("requests:".count).split(separator: ",") where part.hasSuffix("done") {
                done = Int(part.split(separator: " ").first ?? "") ?? 0
            }
        }
        var twoHundreds = 0
        if let line = lines.first(where: { $0.hasPrefix("status codes:") }) {
            twoHundreds = Int(line.split(separator: " ").dropFirst(2).first ?? "") ?? 0
        }
        return Result(done: done, twoHundreds: twoHundreds, elapsedSeconds: elapsed, cpuSeconds: cpuSeconds)
    }
}
