internal import CRdKafka

/// Builds an `rd_kafka_conf_t` from a rendered configuration dictionary.
///
/// Owns the conf until ``RDKafkaHandle`` takes it (`rd_kafka_new` takes ownership on success only).
final class RDKafkaConfig {
    private(set) var pointer: OpaquePointer?

    init(_ dictionary: [String: String]) throws(KafkaError) {
        guard let conf = rd_kafka_conf_new() else {
            throw KafkaError(code: .creation, reason: "rd_kafka_conf_new failed")
        }
        pointer = conf
        for key in dictionary.keys.sorted() {
            try set(key, dictionary[key]!)
        }
    }

    /// Every property librdkafka refuses (unknown name, invalid value), one error each, in key order.
    static func problems(_ dictionary: [String: String]) -> [KafkaError] {
        guard let config = try? RDKafkaConfig([:]) else { return [] }
        var problems: [KafkaError] = []
        for key in dictionary.keys.sorted() {
            do throws(KafkaError) { try config.set(key, dictionary[key]!) } catch { problems.append(error) }
        }
        return problems
    }

    func set(_ key: String, _ value: String) throws(KafkaError) {
        var errorText = [CChar](repeating: 0, count: 512)
        let result = rd_kafka_conf_set(pointer, key, value, &errorText, errorText.count)
        guard result == RD_KAFKA_CONF_OK else {
            let reason = errorText.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            // librdkafka's text names the property (`No such configuration property: "x"`, `Invalid value "y" for
            // configuration property "x"`); say which one when it does not. It quotes the refused value: a secret's
            // must not reach an error message or a log.
            let text = KafkaSensitiveProperty.scrub(reason, name: key, value: value)
            throw KafkaError.configuration(text.contains(key) ? text : "\(key): \(text)")
        }
    }

    /// Enables the event types delivered through queues instead of callbacks.
    func enableEvents(_ events: Int32) {
        rd_kafka_conf_set_events(pointer, events)
    }

    /// Hands the conf to librdkafka; the caller must not use or free it afterwards.
    func release() -> OpaquePointer? {
        defer { pointer = nil }
        return pointer
    }

    deinit {
        if let pointer { rd_kafka_conf_destroy(pointer) }
    }
}
