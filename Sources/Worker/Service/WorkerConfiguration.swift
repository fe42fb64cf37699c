package import Kafka

/// Settings of one worker process. Every part documents its own defaults.
package struct WorkerConfiguration: Sendable {
    /// The topic upstream services produce call events to. Default: `"calls"`.
    package var callsTopic: String = "calls"
    /// Consumer group, back-pressure (in-flight window) and drain bounds. Default: ``KafkaConsumerConfiguration/init()``
    /// with a 25 s close drain.
    package var consumer: KafkaConsumerConfiguration = {
        var consumer = KafkaConsumerConfiguration()
        consumer.closeDrainTimeout = .seconds(25)
        return consumer
    }()
    /// The idempotent producer for retry, dead-letter, invalidation and receipt records.
    /// Default: ``KafkaProducerConfiguration/init()`` with `linger` `.milliseconds(1)`: an event's outcome is final
    /// only once its records are acknowledged, so linger adds to every such event's time (librdkafka's 5 ms default
    /// would dominate the worker's own time with receipts on); 0 costs more than it saves under load (a produce
    /// request per record). docs/performance.md, "Producer linger", has the measurements.
    package var producer: KafkaProducerConfiguration = {
        var producer = KafkaProducerConfiguration()
        producer.linger = .milliseconds(1)
        return producer
    }()
    /// Decoding, mapping, retry tiers, output topics. Default: ``DispatcherConfiguration/init()``.
    package var dispatcher = DispatcherConfiguration()
    /// Scan each newly assigned calls partition's backlog for stop events before its incoming calls ring, and what lies
    /// before it before retries from there ring, with a Kafka client of its own (``KafkaRangeReader``); false: the
    /// read-ahead alone, bounded by half the in-flight limits, and retries unchecked against hang-ups the previous
    /// owner sent. Default: true.
    package var backlogScans = true
    /// How long shutdown waits for the producer to deliver what is queued. Default: 10 s.
    var producerFlushTimeout: Duration = .seconds(10)
    /// How long the topic check at start (and after each assignment) waits for the cluster's metadata. Default: 10 s.
    var metadataTimeout: Duration = .seconds(10)

    package init() {}

    /// The main topic followed by every retry tier: the consumer's subscription.
    var subscribedTopics: [String] { [callsTopic] + dispatcher.routing.retry.tiers.map(\.topic) }

    /// Every topic the worker reads or writes, for creating them in a test or demo cluster.
    package var allTopics: [String] { [callsTopic] + producedTopics }

    /// Every topic the worker writes: the retry tiers, the dead-letter and token-invalidation topics and, with
    /// receipts on, the outcomes topic.
    var producedTopics: [String] {
        var topics = dispatcher.routing.retry.tiers.map(\.topic)
        topics += [dispatcher.routing.deadLetterTopic, dispatcher.routing.invalidatedTokensTopic]
        if dispatcher.routing.emitReceipts { topics.append(dispatcher.routing.outcomesTopic) }
        return topics
    }
}
