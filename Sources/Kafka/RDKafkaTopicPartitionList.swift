internal import CRdKafka

/// An owned `rd_kafka_topic_partition_list_t`, destroyed in `deinit`.
final class RDKafkaTopicPartitionList {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    init(capacity: Int = 1) {
        pointer = rd_kafka_topic_partition_list_new(Int32(clamping: capacity))
    }

    /// Adds a partition with an offset.
    func add(_ partition: KafkaTopicPartition, offset: Int64) {
        let element = rd_kafka_topic_partition_list_add(pointer, partition.topic, partition.partition)
        element?.pointee.offset = offset
    }

    /// Adds a topic with the unassigned partition (for subscriptions).
    func add(topic: String) {
        rd_kafka_topic_partition_list_add(pointer, topic, CRdKafka_PARTITION_UA())
    }

    var elements: [RDKafkaTopicPartitionList.Element] { Self.elements(of: pointer) }

    struct Element {
        var topicPartition: KafkaTopicPartition
        var offset: Int64
        var error: rd_kafka_resp_err_t
    }

    /// Reads a list owned by librdkafka (e.g. the rebalance callback's) without taking ownership.
    static func elements(of list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> [Element] {
        guard let list, let base = list.pointee.elems else { return [] }
        var result: [Element] = []
        result.reserveCapacity(Int(list.pointee.cnt))
        for index in 0..<Int(list.pointee.cnt) {
            let element = base[index]
            let topic = element.topic.map { String(cString: $0) } ?? ""
            result.append(
                Element(
                    topicPartition: KafkaTopicPartition(topic: topic, partition: element.partition),
                    offset: element.offset,
                    error: element.err
                )
            )
        }
        return result
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(pointer)
    }
}
