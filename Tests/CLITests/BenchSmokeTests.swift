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
