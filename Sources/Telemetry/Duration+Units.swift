extension Duration {
    /// The duration in seconds as a `Double`, for rates, timers and Prometheus values.
    package var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// Whole milliseconds (truncated, clamped to `Int64`), for wall-clock arithmetic in epoch milliseconds and
    /// `*.ms` settings.
    package var inMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds.saturatingMultiply(1000).saturatingAdd(attoseconds / 1_000_000_000_000_000)
    }

    /// Whole microseconds (truncated, clamped to `Int64`), for settings finer than a millisecond.
    package var inMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds.saturatingMultiply(1_000_000).saturatingAdd(attoseconds / 1_000_000_000_000)
    }
}
