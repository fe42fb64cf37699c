/// A record to produce.
public struct KafkaProducerRecord: Sendable {
    public var topic: String
    /// The partition; `nil` lets librdkafka's partitioner pick one from the key.
    public var partition: Int32?
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [KafkaHeader]

    public init(
        topic: String,
        partition: Int32? = nil,
        key: [UInt8]? = nil,
        value: [UInt8],
        headers: [KafkaHeader] = []
    ) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
    }
}

/// A successful delivery: the broker has acknowledged the record (`acks=all`).
public struct KafkaDeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    /// The record's offset; `nil` when librdkafka does not know it (possible for idempotent retries).
    public var offset: Int64?
    /// The producer-assigned id of the record (unique per producer), as returned by
    /// ``KafkaProducer/produce(_:completion:)``.
    public var id: UInt
}
