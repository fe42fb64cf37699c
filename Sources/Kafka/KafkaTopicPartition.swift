/// One partition of one topic.
package struct KafkaTopicPartition: Hashable, Sendable, CustomStringConvertible {
    package var topic: String
    package var partition: Int32

    package init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    package var description: String { "\(topic)[\(partition)]" }
}
