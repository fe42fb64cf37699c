/// Reading one series out of a Prometheus text exposition.
public enum ExpositionSeries {
    /// The value of the series whose line starts with `series` (its name and labels exactly as exposed, e.g.
    /// `callpush_outcomes_total{outcome="delivered"}`) followed by a space; nil when no line has it.
    public static func value(_ series: String, in exposition: String) -> Double? {
        exposition.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }
}
