/// Settings of a ``KafkaRangeReader``. Every property has a default; ``dictionary`` renders the librdkafka keys.
package struct KafkaRangeReaderConfiguration: Sendable {
    /// Comma-separated `host:port` list. Default: `"localhost:9092"`.
    package var bootstrapServers: String = "localhost:9092"
    /// Client id. Default: `"callpush-range-reader"`.
    package var clientID: String = "callpush-range-reader"
    /// A range whose partition delivers nothing for this long fails (a stalled or unreachable broker). Default:
    /// `.seconds(5)`.
    package var stallTimeout: Duration = .seconds(5)
    /// With no range to read for this long the reader destroys its librdkafka client and stops its thread, so a
    /// worker pays for neither between rebalances; the next range creates them again. Default: `.seconds(30)`.
    package var idleTimeout: Duration = .seconds(30)
    /// Ranges read at the same time; more wait their turn. Each costs a fetch of its own and up to 1 MB of
    /// prefetched records. Default: 8.
    package var maxConcurrentRanges = 8
    /// Longest time a broker holds a fetch waiting for data (`fetch.wait.max.ms`). Default: `.milliseconds(10)`.
    package var fetchWaitMax: Duration = .milliseconds(10)
    /// Extra librdkafka properties (security settings), applied last. Default: `[:]`.
    package var additionalProperties: [String: String] = [:]

    package init() {}

    /// Reads from the brokers a consumer with `consumer`'s settings reads from: its servers and extra properties
    /// (security, tuning) but those of group membership, its fetch wait, and its client id with `-range` appended.
    package init(consumer: KafkaConsumerConfiguration) {
        bootstrapServers = consumer.bootstrapServers
        clientID = consumer.clientID + "-range"
        fetchWaitMax = consumer.fetchWaitMax
        // The reader belongs to no group: a group or static member id in the extra properties is the consumer's alone.
        additionalProperties = consumer.additionalProperties.filter { !$0.key.hasPrefix("group.") }
    }

    /// The librdkafka configuration keys and values.
    var dictionary: [String: String] {
        var result: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientID,
            "socket.nagle.disable": "true",
            "fetch.wait.max.ms": String(fetchWaitMax.inMilliseconds),
            // A range starting below the log's start (retention deleted it) reads from the oldest record kept.
            "auto.offset.reset": "earliest",
            // Nothing is committed: ranges start at explicit offsets, and librdkafka sets up the simple consumer's
            // offset store (and its auto commit) only for ranges started at the stored offset. (Setting
            // `auto.commit.enable` logged a deprecation warning at every start.)
            // The end of the log ends a range whose last offsets do not exist (compaction, transaction markers).
            "enable.partition.eof": "true",
            // A scan reads each record once, as fast as it is handed over: a small prefetch per partition (the simple
            // consumer's limits are per partition; librdkafka's defaults are 100 000 messages and 64 MB) keeps the
            // scans of a large assignment from adding hundreds of MB to the worker.
            "queued.min.messages": String(KafkaRangeReader.prefetchMessages),
            "queued.max.messages.kbytes": "1024",
            "log.queue": "true",
        ]
        for (key, value) in additionalProperties { result[key] = value }
        return result
    }
}
