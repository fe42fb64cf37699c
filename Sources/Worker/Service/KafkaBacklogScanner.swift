import Kafka

/// The read-ahead's backlog and history scans over a ``KafkaRangeReader`` (its own librdkafka consumer, outside the group).
struct KafkaBacklogScanner: BacklogScanner {
    let reader: KafkaRangeReader

    func scan(
        topic: String, partition: Int32, from: Int64, to: Int64?,
        each: @escaping @Sendable (_ value: [UInt8]) -> Bool,
        finished: @escaping @Sendable (BacklogScanOutcome) -> Void
    ) {
        reader.read(KafkaTopicPartition(topic: topic, partition: partition), from: from, to: to) { record in
            each(record.value)
        } finished: { outcome in
            switch outcome {
            case .completed: finished(BacklogScanOutcome(.completed))
            case .stopped: finished(BacklogScanOutcome(.stopped))
            case .failed(let error): finished(BacklogScanOutcome(.failed, failure: error.description))
            }
        }
    }
}
