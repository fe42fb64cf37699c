/// A successful delivery: the broker has acknowledged the record (`acks=all`).
package struct KafkaDeliveryReport: Sendable, Hashable {
    package var topic: String
    package var partition: Int32
    /// The record's offset; `nil` when librdkafka does not know it (possible for idempotent retries).
    package var offset: Int64?
    /// The producer-assigned id of the record (unique per producer), as returned by
    /// ``KafkaProducer/produce(_:completion:)``.
    package var id: UInt

    package init(topic: String, partition: Int32, offset: Int64?, id: UInt) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.id = id
    }
}
