/// Receives a ``KafkaConsumer``'s messages and group events.
///
/// - Important: Every method is called on the consumer's poll thread, inside or between
///   `rd_kafka_consumer_poll` calls. Return quickly: hand work to other threads or tasks, never block. Calling
///   ``KafkaConsumer/complete(_:)`` or ``KafkaConsumer/hold(_:until:)`` from inside these methods is fine.
package protocol KafkaConsumerDelegate: AnyObject, Sendable {
    /// A message to process. Complete it later with ``KafkaConsumer/complete(_:)`` (from any thread), or hand it
    /// back with ``KafkaConsumer/hold(_:until:)`` when it is not due yet: it is redelivered here when due.
    func consumer(_ consumer: KafkaConsumer, didReceive message: KafkaMessage)
    /// The messages one poll-loop turn took from librdkafka's local queue, in consumption order (per partition in
    /// offset order): whatever was already fetched, up to ``KafkaConsumerConfiguration/deliveryBatchSize``. A
    /// delegate that wants to look ahead (e.g. for a later event that cancels an earlier one) implements this;
    /// by default each message goes to ``consumer(_:didReceive:)-(_,KafkaMessage)`` in order.
    func consumer(_ consumer: KafkaConsumer, didReceive messages: [KafkaMessage])
    /// One poll-loop turn ended, whether or not it delivered messages — also called again and again while a revoke
    /// waits for in-flight messages: on the poll thread, for work that must run on the thread that receives the
    /// messages (such as freeing what it made, or completing messages in one call). Keep it short.
    func consumerDidPoll(_ consumer: KafkaConsumer)
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
    package func consumer(_ consumer: KafkaConsumer, didReceive messages: [KafkaMessage]) {
        // Once a message is held, the rest of its partition in this batch waits behind it, in order.
        var waiting: Set<KafkaTopicPartition> = []
        for message in messages {
            if waiting.contains(message.topicPartition), consumer.holdBehindHeld(message) { continue }
            self.consumer(consumer, didReceive: message)
            if consumer.isHeld(message) { waiting.insert(message.topicPartition) }
        }
    }
    package func consumerDidPoll(_ consumer: KafkaConsumer) {}
    package func consumer(_ consumer: KafkaConsumer, didAssign partitions: [KafkaTopicPartition]) {}
    package func consumer(_ consumer: KafkaConsumer, didRevoke partitions: [KafkaTopicPartition]) {}
    package func consumer(_ consumer: KafkaConsumer, didFail error: KafkaError) {}
}
