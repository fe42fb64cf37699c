/// Which librdkafka properties hold secrets, so their values never appear in printed configurations, errors or logs.
///
/// A property is sensitive when its name contains `password`, `secret`, `key.pem`, `token`, `credential`, `jaas` or
/// `oauthbearer.config`: librdkafka's own sensitive set (`sasl.password`, `ssl.key.password`,
/// `ssl.keystore.password`, `ssl.key.pem`, `sasl.oauthbearer.client.secret`, `sasl.oauthbearer.config`) and the
/// names other clients use for the same things. Paths (`ssl.key.location`) and user names are not secrets.
package enum KafkaSensitiveProperty {
    /// What a hidden value is shown as.
    package static let placeholder = "(hidden)"

    private static let markers = ["password", "secret", "key.pem", "token", "credential", "jaas", "oauthbearer.config"]

    /// Whether the value of the property `name` must not be shown.
    package static func isSensitive(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return markers.contains { lowered.contains($0) }
    }

    /// `text` with every occurrence of `value` replaced by ``placeholder`` when `name` is sensitive.
    static func scrub(_ text: String, name: String, value: String) -> String {
        guard isSensitive(name), !value.isEmpty else { return text }
        return text.replacing(value, with: placeholder)
    }
}
