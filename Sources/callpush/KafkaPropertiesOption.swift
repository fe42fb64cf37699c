import Foundation
import Kafka

/// `--kafka-properties` (`CALLPUSH_KAFKA_PROPERTIES`, file key `kafka.properties`): extra librdkafka properties as
/// `k=v;k=v`, shared by `run` and `produce` (including its DLQ replay). Values of sensitive properties
/// (``KafkaSensitiveProperty``: `sasl.password`, `ssl.key.pem`, …) are never echoed: `--print-config` shows them as
/// `(hidden)` and a malformed entry is reported by its position, not its text.
enum KafkaPropertiesOption {
    static let spec = OptionSpec(
        "kafka.properties", .properties, default: "", environment: true,
        "extra librdkafka properties, k=v;k=v (e.g. SASL/TLS; secret values are never shown)")

    /// `k=v;k=v` → dictionary, or one problem per malformed entry.
    static func parse(_ text: String) -> Result<[String: String], OptionParser.Failure> {
        var properties: [String: String] = [:]
        var problems: [String] = []
        for (index, entry) in entries(text).enumerated() {
            guard let (key, value) = split(entry) else {
                problems.append("\(spec.flag): entry \(index + 1) is not key=value (entries are separated by ';')")
                continue
            }
            properties[key] = value
        }
        return problems.isEmpty ? .success(properties) : .failure(.init(problems: problems))
    }

    /// `text` with the value of every sensitive property replaced by `(hidden)`, and malformed entries too.
    static func masked(_ text: String) -> String {
        entries(text).map { entry in
            guard let (key, value) = split(entry) else { return KafkaSensitiveProperty.placeholder }
            return KafkaSensitiveProperty.isSensitive(key) ? "\(key)=\(KafkaSensitiveProperty.placeholder)" : "\(key)=\(value)"
        }.joined(separator: ";")
    }

    private static func entries(_ text: String) -> [Substring] {
        text.split(separator: ";").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    private static func split(_ entry: Substring) -> (String, String)? {
        let parts = entry.split(separator: "=", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let key = parts[0].trimmingCharacters(in: .whitespaces)
        return key.isEmpty ? nil : (key, parts[1].trimmingCharacters(in: .whitespaces))
    }
}
