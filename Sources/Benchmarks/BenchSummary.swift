/// The table printed after a run: every ratio, with its target where there is one.
struct BenchSummary {
    let result: AreaResult

    var table: String {
        var lines = ["", "Summary (ratios against references measured in this run; > 1 is faster, except cpu/req "
            + "where < 1 is cheaper)"]
        let width = max(40, result.ratios.map(\.name.count).max() ?? 0)
        lines.append(BenchFormat.pad("area", 9) + BenchFormat.pad("measurement", width + 2) + BenchFormat.pad("ratio", 9)
            + "target")
        for ratio in result.ratios {
            let target = ratio.target.map { "\($0) \($0.isMet(by: ratio.ratio) ? "met" : "NOT met")" } ?? "-"
            lines.append(BenchFormat.pad(ratio.area.rawValue, 9) + BenchFormat.pad(ratio.name, width + 2)
                + BenchFormat.pad(BenchFormat.ratio(ratio.ratio), 9) + target)
        }
        lines += result.notes
        return lines.joined(separator: "\n")
    }
}
