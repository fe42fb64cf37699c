import Telemetry
import Foundation

/// Runs a closure in batches until a time budget is spent and reports operations per second. The closure
/// returns a number folded into a checksum so the optimiser cannot drop the work.
enum OpsTimer {
    static func measure(seconds: Double, batch: Int = 200, _ body: () -> Int) -> Double {
        var checksum = 0
        for _ in 0..<batch { checksum &+= body() }  // warm up
        var operations = 0
        let start = ContinuousClock.now
        let budget = Duration.milliseconds(Int(seconds * 1000))
        var elapsed = Duration.zero
        repeat {
            for _ in 0..<batch { checksum &+= body() }
            operations += batch
            elapsed = ContinuousClock.now - start
        } while elapsed < budget
        blackHole(checksum)
        let total = elapsed.inSeconds
        return Double(operations) / total
    }

    @inline(never) @_optimize(none)
    static func blackHole(_ value: Int) {}
}
