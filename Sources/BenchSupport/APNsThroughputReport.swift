/// One throughput measurement against an ``APNsMockServer``.
package struct APNsThroughputReport: Sendable, Hashable, CustomStringConvertible {
    /// Who generated the load: `"APNsClient"` or `"h2load"`.
    package let driver: String
    /// HTTP/2 connections used.
    package let connections: Int
    /// Requests kept outstanding (in total, over all connections).
    package let concurrency: Int
    /// Measured time in seconds.
    package let seconds: Double
    /// Answers received in that time.
    package let pushes: Int
    /// Answers that were not `200`.
    package let failures: Int

    package init(driver: String, connections: Int, concurrency: Int, seconds: Double, pushes: Int, failures: Int) {
        self.driver = driver
        self.connections = connections
        self.concurrency = concurrency
        self.seconds = seconds
        self.pushes = pushes
        self.failures = failures
    }

    /// Answers per second.
    package var pushesPerSecond: Double { seconds > 0 ? Double(pushes) / seconds : 0 }

    package var description: String {
        let rate = (pushesPerSecond * 10).rounded() / 10
        return "\(driver): \(connections) connection(s), \(concurrency) in flight, \(pushes) pushes in "
            + "\((seconds * 1000).rounded() / 1000) s = \(rate) pushes/s, \(failures) failures"
    }
}
