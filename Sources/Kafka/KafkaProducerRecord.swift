/// A record to produce.
package struct KafkaProducerRecord: Sendable, Hashable {
    package var topic: String
    /// The partition; `nil` lets librdkafka's partitioner pick one from the key.
    package var partition: Int32?
    package var key: [UInt8]?
    package var value: [UInt8]
    package var headers: [KafkaHeader]

    package init(
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

