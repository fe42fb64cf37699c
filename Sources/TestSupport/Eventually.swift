/// Polls a condition until it holds or a time limit passes: how tests wait for asynchronous effects without
/// sleeping a fixed time.
public enum Eventually {
    /// Checks `condition` every `interval` until it holds or `timeout` passes; returns whether it held.
    @discardableResult
    public static func waitUntil(
        timeout: Duration,
        interval: Duration = .milliseconds(10),
        _ condition: () -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: interval)
        }
        return true
    }
}
