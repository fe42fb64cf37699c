import Kafka

/// One setting a command accepts: as a flag (`--kafka-brokers`), an environment variable
/// (`CALLPUSH_KAFKA_BROKERS`, for commands that read the environment) and a JSON file key (`kafka.brokers`).
struct OptionSpec: Sendable {
    enum Kind: Sendable {
        /// Free text.
        case string
        /// A whole number within the range.
        case integer(ClosedRange<Int>)
        /// A decimal number within the range.
        case number(ClosedRange<Double>)
        /// `true`/`false`; as a flag, present means true.
        case boolean
        /// One of the listed words.
        case choice([String])
        /// librdkafka properties, `k=v;k=v`; shown with sensitive values hidden (``KafkaPropertiesOption``).
        case properties
    }

    /// Dotted key, e.g. `kafka.brokers`.
    let key: String
    let kind: Kind
    /// The default as text, nil when the setting is optional and has none.
    let defaultValue: String?
    let help: String
    /// Never echoed back in errors or summaries (passwords, key paths are fine to show; key *contents* are not).
    let isSecret: Bool
    /// Read from `CALLPUSH_*` even by a command that reads no other variable (so a secret need not be a flag,
    /// which `ps` shows to every user).
    let alwaysReadsEnvironment: Bool

    init(
        _ key: String, _ kind: Kind, default defaultValue: String? = nil, secret: Bool = false, environment: Bool = false,
        _ help: String
    ) {
        self.key = key
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
        self.isSecret = secret
        self.alwaysReadsEnvironment = environment
    }

    /// `value` as `--print-config` and summaries may show it: secrets hidden, sensitive properties masked.
    func shown(_ value: String) -> String {
        if isSecret && !value.isEmpty { return KafkaSensitiveProperty.placeholder }
        if case .properties = kind { return KafkaPropertiesOption.masked(value) }
        return value
    }

    /// `--kafka-brokers` for `kafka.brokers`.
    var flag: String { "--" + key.replacingOccurrences(of: ".", with: "-").replacingOccurrences(of: "_", with: "-") }

    /// `CALLPUSH_KAFKA_BROKERS` for `kafka.brokers`.
    var environmentName: String {
        "CALLPUSH_" + key.uppercased().replacingOccurrences(of: ".", with: "_").replacingOccurrences(of: "-", with: "_")
    }

    var isFlagOnly: Bool {
        if case .boolean = kind { return true }
        return false
    }

    var typeDescription: String {
        switch kind {
        case .string: "text"
        case .integer(let range): "integer \(range.lowerBound)…\(range.upperBound)"
        case .number(let range): "number \(Self.trim(range.lowerBound))…\(Self.trim(range.upperBound))"
        case .boolean: "true|false"
        case .choice(let words): words.joined(separator: "|")
        case .properties: "k=v;k=v"
        }
    }

    /// Checks `text` against the kind; returns a problem description or nil.
    func problem(with text: String) -> String? {
        let shown = isSecret ? "(hidden)" : "'\(text)'"
        switch kind {
        case .string:
            return nil
        case .properties:
            guard case .failure(let failure) = KafkaPropertiesOption.parse(text) else { return nil }
            return failure.problems.joined(separator: "; ")
        case .integer(let range):
            guard let value = Int(text) else { return "\(flag) expects an integer, got \(shown)" }
            return range.contains(value) ? nil : "\(flag) must be between \(range.lowerBound) and \(range.upperBound), got \(value)"
        case .number(let range):
            guard let value = Double(text), value.isFinite else { return "\(flag) expects a number, got \(shown)" }
            return range.contains(value)
                ? nil : "\(flag) must be between \(Self.trim(range.lowerBound)) and \(Self.trim(range.upperBound)), got \(text)"
        case .boolean:
            return ["true", "false", "1", "0", "yes", "no"].contains(text.lowercased())
                ? nil : "\(flag) expects true or false, got \(shown)"
        case .choice(let words):
            return words.contains(text) ? nil : "\(flag) must be one of \(words.joined(separator: ", ")), got \(shown)"
        }
    }

    private static func trim(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
