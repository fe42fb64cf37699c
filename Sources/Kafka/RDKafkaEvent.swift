internal import CRdKafka

/// One event taken from a librdkafka queue, converted to Swift values (the C event is destroyed at once).
enum RDKafkaEvent {
    /// A librdkafka log line; `level` is syslog severity 0...7.
    case log(level: Int32, facility: String, message: String)
    case error(KafkaError)
    /// librdkafka statistics JSON.
    case statistics(String)
    /// The result of an offset commit: whether it succeeded, whether the group coordinator refused it (or part of
    /// it) because the group is rebalancing, and the offsets committed (of the partitions whose commit succeeded).
    case offsetCommit(succeeded: Bool, refusedForRebalance: Bool, committed: [(KafkaTopicPartition, Int64)])

    /// Polls one event from `queue`, waiting at most `timeoutMilliseconds`; `nil` when none arrived.
    static func poll(_ queue: OpaquePointer, timeoutMilliseconds: Int32) -> RDKafkaEvent?? {
        guard let event = rd_kafka_queue_poll(queue, timeoutMilliseconds) else { return nil }
        defer { rd_kafka_event_destroy(event) }
        return .some(converting(event))
    }

    /// The event's Swift value (`nil` for a type this module does not convert, such as delivery reports, which the
    /// producer reads in place); `event` stays the caller's to destroy.
    static func converting(_ event: OpaquePointer) -> RDKafkaEvent? {
        switch Int32(rd_kafka_event_type(event)) {
        case Int32(CRdKafka_EVENT_LOG()):
            var facility: UnsafePointer<CChar>?
            var text: UnsafePointer<CChar>?
            var level: Int32 = 6
            rd_kafka_event_log(event, &facility, &text, &level)
            return .log(
                level: level,
                facility: facility.map { String(cString: $0) } ?? "",
                message: text.map { String(cString: $0) } ?? ""
            )
        case Int32(CRdKafka_EVENT_ERROR()):
            let err = rd_kafka_event_error(event)
            let reason = rd_kafka_event_error_string(event).map { String(cString: $0) }
            let fatal = rd_kafka_event_error_is_fatal(event) != 0
            return .error(KafkaError.rdKafka(err, reason: reason, isFatal: fatal))
        case Int32(CRdKafka_EVENT_STATS()):
            return .statistics(rd_kafka_event_stats(event).map { String(cString: $0) } ?? "{}")
        case Int32(CRdKafka_EVENT_OFFSET_COMMIT()):
            let rebalancing = RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS
            let overall = rd_kafka_event_error(event)
            let elements = RDKafkaTopicPartitionList.elements(of: rd_kafka_event_topic_partition_list(event))
            let errors = [overall] + elements.map(\.error)
            let failed = errors.contains { $0 != RD_KAFKA_RESP_ERR_NO_ERROR && $0 != RD_KAFKA_RESP_ERR__NO_OFFSET }
            // Only where the whole commit and the partition's part succeeded (not `_NO_OFFSET`: nothing to commit).
            let committed = overall != RD_KAFKA_RESP_ERR_NO_ERROR ? [] : elements.compactMap { element in
                element.error == RD_KAFKA_RESP_ERR_NO_ERROR && element.offset >= 0 ? (element.topicPartition, element.offset) : nil
            }
            return .offsetCommit(succeeded: !failed, refusedForRebalance: errors.contains(rebalancing), committed: committed)
        default:
            return nil
        }
    }
}
