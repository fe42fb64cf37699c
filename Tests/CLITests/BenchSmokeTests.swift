import Foundation
import Testing

/// Keeps `callpush-bench` working: a quick json run (allowed in debug builds, with a warning) exits 0 and prints
/// its ratios. Numbers are not checked: they mean nothing in a debug build.
@Suite struct BenchSmokeTests {
    let bench = CallpushProcess.executable(named: "callpush-bench")

    @Test func quickJSONRunPrintsRatios() throws {
        let result = try CallpushProcess.run(["json", "--quick"], executable: bench, timeout: 60)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("ratio event decode ops/s vs JSONSerialization = "))
        #expect(result.stdout.contains("ratio payload encode ops/s vs JSONSerialization = "))
    }

    /// The kafka and latency areas run in processes of their own with `callpush run`'s arena limit; their ratios
    /// (with targets), notes and the Kafka consume rate come back into this process: its summary table lists what
    /// the children measured, and the pipeline area takes the kafka area's consume rate as its reference.
    @Test func ownProcessAreasReportBack() async throws {
        let result = try await CallpushProcess.runOffPool(
            ["kafka", "pipeline", "latency", "--quick", "--latency-max-rate", "1000"], executable: bench, timeout: 300)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.components(separatedBy: "in a process of its own with MALLOC_ARENA_MAX=8").count == 3)
        #expect(result.stdout.contains("ratio worker p99 at 50 % of max vs 5 ms = "))
        let consumed = try #require(result.stdout.firstMatch(of: #/in-process: produced [^,]+, consumed ([^ ]+) /#)?.1)
        #expect(result.stdout.contains("references: Kafka consume \(consumed),"))
        let summary = try #require(result.stdout.components(separatedBy: "Summary (").last)
        #expect(summary.contains("latency  worker p99 at 50 % of max vs 5 ms"))
        #expect(summary.firstMatch(of: #/kafka +produce msgs/s vs kcat -P \(20000 msgs\) +[0-9.]+× +≥ 0.90× (met|NOT met)/#) != nil)
        #expect(summary.contains("latency at 50 % of 1000/s: worker p50 "))
        #expect(!result.stdout.contains("FAILED"))
    }

    @Test func unknownAreaIsAUsageError() throws {
        let result = try CallpushProcess.run(["frobnicate"], executable: bench)
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown area or option 'frobnicate'"))
    }

    /// Options that take a number refuse one that is not positive, and `--help` lists them.
    @Test(arguments: [("memory", "--soak-minutes", "0"), ("latency", "--latency-max-rate", "-5")])
    func numberOptionMustBePositive(area: String, option: String, value: String) throws {
        let result = try CallpushProcess.run([area, option, value], executable: bench)
        #expect(result.status == 64)
        #expect(result.stderr.contains("\(option) needs a positive number"))
        let help = try CallpushProcess.run(["--help"], executable: bench)
        #expect(help.stdout.contains("\(option) N"))
    }

    @Test func helpListsEveryArea() throws {
        let result = try CallpushProcess.run(["--help"], executable: bench)
        #expect(result.status == 0)
        for area in ["http2", "apns", "kafka", "json", "pipeline", "worker", "latency", "memory"] {
            #expect(result.stdout.contains("  \(area) "))
        }
    }
}
