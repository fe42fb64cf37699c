/// A bound on a ratio: at least (throughput) or at most (CPU per request).
struct BenchTarget: Sendable, CustomStringConvertible {
    enum Kind: Sendable { case atLeast, atMost }
    let kind: Kind
    let bound: Double

    static func atLeast(_ bound: Double) -> BenchTarget { BenchTarget(kind: .atLeast, bound: bound) }
    static func atMost(_ bound: Double) -> BenchTarget { BenchTarget(kind: .atMost, bound: bound) }

    func isMet(by ratio: Double) -> Bool { kind == .atLeast ? ratio >= bound : ratio <= bound }

    var description: String { (kind == .atLeast ? "≥ " : "≤ ") + BenchFormat.ratio(bound) }
}
