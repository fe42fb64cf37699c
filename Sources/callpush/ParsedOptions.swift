/// The resolved settings of one command invocation: flags win over the environment, which wins over the
/// JSON file, which wins over defaults.
struct ParsedOptions: Sendable {
    private(set) var values: [String: String]
    /// Where each value came from (`flag`, `environment`, `file`, `default`), for `--print-config`.
    private(set) var sources: [String: String]
    /// Words that were not flags, in order.
    let positional: [String]

    init(values: [String: String], sources: [String: String], positional: [String]) {
        self.values = values
        self.sources = sources
        self.positional = positional
    }

    func string(_ key: String) -> String? { values[key] }

    func string(_ key: String, or fallback: String) -> String { values[key] ?? fallback }

    func integer(_ key: String) -> Int? { values[key].flatMap { Int($0) } }

    func number(_ key: String) -> Double? { values[key].flatMap { Double($0) } }

    func boolean(_ key: String) -> Bool {
        guard let text = values[key]?.lowercased() else { return false }
        return ["true", "1", "yes"].contains(text)
    }

    /// Comma-separated list, empty entries dropped.
    func list(_ key: String) -> [String] {
        (values[key] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func has(_ key: String) -> Bool { values[key] != nil }

    /// Where `key`'s value came from: `flag`, `environment CALLPUSH_…`, `file` or `default`.
    func source(of key: String) -> String? { sources[key] }
}
