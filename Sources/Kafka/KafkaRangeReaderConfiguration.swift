/// Settings of a ``KafkaRangeReader``. Every property has a default; ``dictionary`` renders the librdkafka keys.
public struct KafkaRangeReaderConfiguration: Sendable {
    /// Comma-separated `host:port` list. Default: `"localhost:9092"`.
    public var bootstrapServers: String = "localhost:9092"
    /// The group id librdkafka requires before it assigns partitions. The reader never joins that group (it
    /// assigns, it does not subscribe) and never commits to it; the consumer's own group keeps the access rights of
    /// a cluster with ACLs the same. Default: `"callpush"`.
    public var groupID: String = "callpush"
    /// Client id. Default: `"callpush-range-reader"`.
    public var clientID: String = "callpush-range-reader"
    /// A range whose partition delivers nothing for this long fails (a stalled or unreachable broker). Default:
    /// `.seconds(5)`.
    public var stallTimeout: Duration = .seconds(5)
    /// With no range to read for this long the reader destroys its librdkafka client and stops its thread, so a
    /// worker pays for neither between rebalances; the next range creates them again. Default: `.seconds(30)`.
    public var idleTimeout: Duration = .seconds(30)
    /// Longest time a broker holds a fetch waiting for data (`fetch.wait.max.ms`). Default: `.milliseconds(10)`.
    public var fetchWaitMax: Duration = .milliseconds(10)
    /// Extra librdkafka properties (security settings), applied last. Default: `[:]`.
    public var additionalProperties: [String: String] = [:]

    public init() {}

    /// Reads from the brokers a consumer with `consumer`'s settings reads from: its servers, group and extra
    /// properties (security, tuning) but `group.instance.id`, its fetch wait, and its client id with `-range` appended.
    public init(consumer: KafkaConsumerConfiguration) {
        bootstrapServers = consumer.bootstrapServers
        groupID = consumer.groupID
        clientID = consumer.clientID + "-range"
        fetchWaitMax = consumer.fetchWaitMax
        additionalProperties = consumer.additionalProperties
        // A static member id is the consumer's alone (the reader never joins, and must not look like that member).
        additionalProperties["group.instance.id"] = nil
    }

    /// The librdkafka configuration keys and values.
    var dictionary: [String: String] {
        var result: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "group.id": groupID,
            "client.id": clientID,
            "socket.nagle.disable": "true",
            "fetch.wait.max.ms": String(fetchWaitMax.inMilliseconds),
            // A range starting below the log's start (retention deleted it) reads from the oldest record kept.
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
            "enable.auto.offset.store": "false",
            // The end of the log ends a range whose last offsets do not exist (compaction, transaction markers).
            "enable.partition.eof": "true",
            "log.queue": "true",
        ]
        for (key, value) in additionalProperties { result[key] = value }
        return result
    }
}
