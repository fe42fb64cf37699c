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

    /// The latency area runs in a process of its own with `callpush run`'s arena limit; its ratio and notes come back
    /// into this process's summary table (which lists what the child measured, not what this process did).
    @Test func latencyAreaRunsInItsOwnProcessAndReportsBack() async throws {
        let result = try await CallpushProcess.runOffPool(["json", "latency", "--quick", "--latency-max-rate", "1000"],
                                                          executable: bench, timeout: 240)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("in a process of its own with MALLOC_ARENA_MAX=8"))
        #expect(result.stdout.contains("ratio worker p99 at 50 % of max vs 5 ms = "))
        let summary = try #require(result.stdout.components(separatedBy: "Summary (").last)
        #expect(summary.contains("latency  worker p99 at 50 % of max vs 5 ms"))
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
