internal import Foundation

/// Polls a condition until it holds or a time limit passes: how tests wait for asynchronous effects without
/// sleeping a fixed time.
package enum Eventually {
    /// Checks `condition` every `interval` until it holds or `timeout` passes; returns whether it held.
    @discardableResult
    package static func waitUntil(
        timeout: Duration,
        interval: Duration = .milliseconds(10),
        _ condition: () throws -> Bool
    ) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: interval)
        }
        return true
    }

    /// ``waitUntil(timeout:interval:_:)`` for synchronous callers: blocks the calling thread between checks.
    @discardableResult
    package static func blockingWaitUntil(
        timeout: Duration,
        interval: Duration = .milliseconds(10),
        _ condition: () throws -> Bool
    ) rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: Double(interval.components.seconds)
                + Double(interval.components.attoseconds) / 1e18)
        }
        return true
    }
}
