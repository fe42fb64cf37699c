/// The resolved settings of one command invocation: flags win over the environment, which wins over the
/// JSON file, which wins over defaults.
struct ParsedOptions: Sendable {
    private(set) var values: [String: String]
    /// Where each value came from (`flag`, `environment`, `file`, `default`), for `--print-config`.
    private(set) var sources: [String: String]
    /// Words that were not flags, in order.
    let positional: [String]
    /// The `--config` file, when one was given (its `apns.apps` are read by ``APNsAppsFile``).
    let configFile: String?
    /// Parses the same arguments and environment again, re-reading the config file (SIGHUP).
    let reparse: (@Sendable () -> Result<ParsedOptions, OptionParser.Failure>)?

    init(
        values: [String: String],
        sources: [String: String],
        positional: [String],
        configFile: String? = nil,
        reparse: (@Sendable () -> Result<ParsedOptions, OptionParser.Failure>)? = nil
    ) {
        self.values = values
        self.sources = sources
        self.positional = positional
        self.configFile = configFile
        self.reparse = reparse
    }

    func string(_ key: String) -> String? { values[key] }

    func integer(_ key: String) -> Int? { values[key].flatMap { Int($0) } }

    func number(_ key: String) -> Double? { values[key].flatMap { Double($0) } }

    /// The value of a setting whose ``OptionSpec`` has a default: the parser always sets one, so the spec's default
    /// is the only copy of it (`--help` and `--print-config` show it). A key without a value here is a misspelt key
    /// or a spec without its default: a programming error, stopped at the first use of the command.
    func defaulted(_ key: String) -> String {
        guard let value = values[key] else { preconditionFailure("setting '\(key)' has no value: its OptionSpec needs a default") }
        return value
    }

    /// ``defaulted(_:)`` as a whole number (its spec checked that it is one).
    func defaultedInteger(_ key: String) -> Int {
        guard let value = Int(defaulted(key)) else { preconditionFailure("setting '\(key)' is not an integer setting") }
        return value
    }

    /// ``defaulted(_:)`` as a number (its spec checked that it is one).
    func defaultedNumber(_ key: String) -> Double {
        guard let value = Double(defaulted(key)) else { preconditionFailure("setting '\(key)' is not a number setting") }
        return value
    }

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
