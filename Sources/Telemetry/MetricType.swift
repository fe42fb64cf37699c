/// The Prometheus metric types this registry exposes.
enum MetricType: String, Sendable {
    case counter, gauge, histogram
}
