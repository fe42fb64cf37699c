/// A `callpush` subcommand.
protocol Command: Sendable {
    /// The word after `callpush`.
    var name: String { get }
    /// One line for `callpush --help`.
    var summary: String { get }
    /// Usage line(s) and a paragraph shown by `callpush <name> --help`, before the options.
    var usage: String { get }
    /// Copy-paste examples shown at the end of `--help`.
    var examples: [String] { get }
    var options: [OptionSpec] { get }
    /// Whether `CALLPUSH_*` and `--config FILE` are read.
    var readsEnvironment: Bool { get }
    var maximumPositional: Int { get }

    /// Runs the command and returns the process exit status.
    func run(_ options: ParsedOptions) async -> Int32
}

extension Command {
    var readsEnvironment: Bool { false }
    var maximumPositional: Int { 0 }
    var examples: [String] { [] }

    var help: String {
        var text = "callpush \(name): \(summary)\n\n\(usage)\n"
        if !options.isEmpty {
            text += "\nOptions:\n"
            let width = min(34, (options.map { $0.flag.count + 1 + ($0.isFlagOnly ? 0 : valueHint($0).count) }.max() ?? 0) + 2)
            for option in options {
                let left = option.isFlagOnly ? option.flag : "\(option.flag) \(valueHint(option))"
                let padding = String(repeating: " ", count: max(1, width - left.count))
                var line = "  \(left)\(padding)\(option.help)"
                if let value = option.defaultValue, !option.isSecret, !option.isFlagOnly { line += " [default: \(value)]" }
                if readsEnvironment || option.alwaysReadsEnvironment { line += " (env \(option.environmentName))" }
                text += line + "\n"
            }
            if readsEnvironment {
                text += "  --config FILE\(String(repeating: " ", count: max(1, width - 13)))JSON file of settings by dotted name, nested or flat (e.g. {\"kafka\":{\"brokers\":\"…\"}}); flags win over CALLPUSH_* variables, which win over the file\n"
            }
            text += "  --help\(String(repeating: " ", count: max(1, width - 6)))this text\n"
        }
        if !examples.isEmpty {
            text += "\nExamples:\n" + examples.map { "  \($0)" }.joined(separator: "\n") + "\n"
        }
        return text
    }

    private func valueHint(_ option: OptionSpec) -> String {
        switch option.kind {
        case .choice(let words): words.joined(separator: "|")
        case .integer: "N"
        case .number: "X"
        default: "VALUE"
        }
    }
}
