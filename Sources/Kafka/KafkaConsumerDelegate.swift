/// Receives a ``KafkaConsumer``'s messages and group events.
///
/// - Important: Every method is called on the consumer's poll thread, inside or between
///   `rd_kafka_consumer_poll` calls. Return quickly: hand work to other threads or tasks, never block. Calling
///   ``KafkaConsumer/complete(_:)`` or ``KafkaConsumer/hold(_:until:)`` from inside these methods is fine.
public protocol KafkaConsumerDelegate: AnyObject, Sendable {
    /// A message to process. Complete it later with ``KafkaConsumer/complete(_:)`` (from any thread), or hand it
    /// back with ``KafkaConsumer/hold(_:until:)`` when it is not due yet: it is redelivered here when due.
    func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage)
    /// Partitions were assigned to this member (before any of their messages is delivered).
    func consumer(_ consumer: KafkaConsumer, didAssign partitions: [KafkaTopicPartition])
    /// Partitions are being revoked. Their messages are no longer delivered, held messages of them are dropped,
    /// and their completions after the revoke has finished are ignored (the new owner gets them again). The
    /// consumer then waits up to `revokeDrainTimeout` for their in-flight messages before storing final offsets.
    func consumer(_ consumer: KafkaConsumer, didRevoke partitions: [KafkaTopicPartition])
    /// An error: fatal ones (`error.isFatal`) leave the consumer unusable, so close it and restart.
    func consumer(_ consumer: KafkaConsumer, didFail error: KafkaError)
}

extension KafkaConsumerDelegate {
    public func consumer(_ consumer: KafkaConsumer, didAssign partitions: [KafkaTopicPartition]) {}
    public func consumer(_ consumer: KafkaConsumer, didRevoke partitions: [KafkaTopicPartition]) {}
    public func consumer(_ consumer: KafkaConsumer, didFail error: KafkaError) {}
}
