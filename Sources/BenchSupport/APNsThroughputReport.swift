/// One throughput measurement against an ``APNsMockServer``.
public struct APNsThroughputReport: Sendable, Hashable, CustomStringConvertible {
    /// Who generated the load: `"APNsClient"` or `"h2load"`.
    public let driver: String
    /// HTTP/2 connections used.
    public let connections: Int
    /// Requests kept outstanding (in total, over all connections).
    public let concurrency: Int
    /// Measured time in seconds.
    public let seconds: Double
    /// Answers received in that time.
    public let pushes: Int
    /// Answers that were not `200`.
    public let failures: Int

    public init(driver: String, connections: Int, concurrency: Int, seconds: Double, pushes: Int, failures: Int) {
        self.driver = driver
        self.connections = connections
        self.concurrency = concurrency
        self.seconds = seconds
        self.pushes = pushes
        self.failures = failures
    }

    /// Answers per second.
    public var pushesPerSecond: Double { seconds > 0 ? Double(pushes) / seconds : 0 }

    public var description: String {
        let rate = (pushesPerSecond * 10).rounded() / 10
        return "\(driver): \(connections) connection(s), \(concurrency) in flight, \(pushes) pushes in "
            + "\((seconds * 1000).rounded() / 1000) s = \(rate) pushes/s, \(failures) failures"
    }
}
