import Kafka

extension InboundRecord {
    /// The consumed message as a plain value for the dispatcher.
    init(_ message: KafkaMessage) {
        self.init(
            topic: message.topic, partition: message.partition, offset: message.offset, key: message.key,
            value: message.value, headers: message.headers.map { RecordHeader(name: $0.name, value: $0.value) },
            timestampMilliseconds: message.timestampMilliseconds ?? 0,
            highWatermarkAtAssignment: message.highWatermarkAtAssignment
        )
    }
}
