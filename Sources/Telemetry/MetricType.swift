/// The Prometheus metric types this registry exposes.
public enum MetricType: String, Sendable {
    case counter, gauge, histogram
}
