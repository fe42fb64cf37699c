extension Duration {
    /// The duration in seconds as a `Double`, for rates, timers and Prometheus values.
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// Whole milliseconds (truncated), for wall-clock arithmetic in epoch milliseconds and `*.ms` settings.
    public var inMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Whole microseconds (truncated), for settings finer than a millisecond.
    public var inMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
