/// A record to produce.
public struct KafkaProducerRecord: Sendable, Hashable {
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

