/// One measurement against its reference from the same run: the unit of the summary table.
struct BenchRatio: Sendable {
    let area: BenchArea
    /// What was compared, e.g. `client -c 1 -m 100 req/s vs h2load`.
    let name: String
    let value: Double
    let reference: Double
    /// The project's target for this ratio (docs/performance.md), if there is one.
    let target: BenchTarget?

    var ratio: Double { reference > 0 ? value / reference : 0 }

    /// `nil` when there is no target.
    var targetMet: Bool? { target.map { $0.isMet(by: ratio) } }

    /// The line printed when the measurement is made, e.g. `ratio client… = 0.93× (target ≥ 1.0×: NOT met)`.
    var line: String {
        var text = "  ratio \(name) = \(BenchFormat.ratio(ratio))"
        if let target { text += " (target \(target): \(target.isMet(by: ratio) ? "met" : "NOT met"))" }
        return text
    }
}

