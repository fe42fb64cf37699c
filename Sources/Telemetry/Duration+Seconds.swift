extension Duration {
    /// The duration in seconds as a `Double`, for rates, timers and Prometheus values.
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
