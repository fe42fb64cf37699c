internal import CRdKafka

/// The single owner of one `rd_kafka_topic_t` reference: librdkafka's local state of a topic (its partitions and
/// their leaders), kept alive, and refreshed by librdkafka, for as long as the reference lives.
///
/// - Important: `@unchecked Sendable` pointer wrapper; it is only created and destroyed. Must be destroyed before
///   its handle.
final class RDKafkaTopic: @unchecked Sendable {
    private(set) var pointer: OpaquePointer?

    /// A reference to `name`'s local state in `handle`, created if the handle has none yet (from librdkafka's
    /// metadata cache when the topic is in it). `nil` when librdkafka refuses the name.
    init?(handle: RDKafkaHandle, name: String) {
        guard let topic = rd_kafka_topic_new(handle.pointer, name, nil) else { return nil }
        pointer = topic
    }

    func destroy() {
        guard let topic = pointer else { return }
        pointer = nil
        rd_kafka_topic_destroy(topic)
    }

    deinit {
        destroy()
    }
}
