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

extension BenchTarget {
    /// `>=0.9` or `<=1.5`: how ``AreaResult/lines`` writes a target; ``init(text:)`` reads it (nil for anything else,
    /// e.g. `-` for no target).
    var text: String { (kind == .atLeast ? ">=" : "<=") + "\(bound)" }

    init?(text: String) {
        guard text.count > 2, let bound = Double(text.dropFirst(2)) else { return nil }
        switch text.prefix(2) {
        case ">=": self = .atLeast(bound)
        case "<=": self = .atMost(bound)
        default: return nil
        }
    }
}
