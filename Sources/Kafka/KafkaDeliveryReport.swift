/// A successful delivery: the broker has acknowledged the record (`acks=all`).
public struct KafkaDeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    /// The record's offset; `nil` when librdkafka does not know it (possible for idempotent retries).
    public var offset: Int64?
    /// The producer-assigned id of the record (unique per producer), as returned by
    /// ``KafkaProducer/produce(_:completion:)``.
    public var id: UInt

    package init(topic: String, partition: Int32, offset: Int64?, id: UInt) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.id = id
    }
}
