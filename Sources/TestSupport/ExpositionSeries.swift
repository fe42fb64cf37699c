/// Reading series out of a Prometheus text exposition.
package enum ExpositionSeries {
    /// The value of the series whose line starts with `series` (its name and labels exactly as exposed, e.g.
    /// `callpush_outcomes_total{outcome="delivered"}`) followed by a space; nil when no line has it.
    package static func value(_ series: String, in exposition: String) -> Double? {
        exposition.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }

    /// The sum of every labelled series of `family` (lines starting with `family{`, e.g. `callpush_outcomes_total`
    /// over all its outcomes); 0 when there is none.
    package static func sum(_ family: String, in exposition: String) -> Double {
        exposition.split(separator: "\n").filter { $0.hasPrefix(family + "{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }
}
