/// Settings of a ``KafkaProducer``. Every property has a default; ``dictionary`` renders the librdkafka keys.
///
/// Idempotence is fixed on (`enable.idempotence=true`, `acks=all`).
package struct KafkaProducerConfiguration: Sendable {
    /// Comma-separated `host:port` list. Default: `"localhost:9092"`.
    package var bootstrapServers: String = "localhost:9092"
    /// Client id; make it unique per process. Default: `"callpush-producer"`.
    package var clientID: String = "callpush-producer"
    /// Time a message may take to be delivered, retries included, before its report fails. Default: `.seconds(30)`.
    package var messageTimeout: Duration = .seconds(30)
    /// Batching delay (`linger.ms`, to the microsecond: librdkafka takes fractions of a millisecond). Default:
    /// `.milliseconds(5)`.
    package var linger: Duration = .milliseconds(5)
    /// `compression.type`: `none`, `gzip`, `snappy`, `lz4` or `zstd`. Default: `"lz4"`.
    package var compression: String = "lz4"
    /// Local queue bound in messages (`queue.buffering.max.messages`). Default: `100000`.
    package var queueBufferingMaxMessages: Int = 100_000
    /// librdkafka statistics interval; `.zero` turns statistics off. Default: `.zero`.
    package var statisticsInterval: Duration = .zero
    /// How long the producer thread's `rd_kafka_queue_poll` may block. Default: `.milliseconds(100)`.
    var pollTimeout: Duration = .milliseconds(100)
    /// ``KafkaProducer/send(_:)`` retries a full local queue this long before failing. Default: `.seconds(10)`.
    var queueFullTimeout: Duration = .seconds(10)
    /// Extra librdkafka properties, applied last (they win). Default: `[:]`.
    package var additionalProperties: [String: String] = [:]

    package init() {}

    /// Every property librdkafka refuses (unknown name, invalid value), checked without creating a client, and
    /// every ``KafkaGuardedProperty`` in ``additionalProperties``: one error each, code `configuration`, with a
    /// one-line reason that names the property.
    package var problems: [KafkaError] {
        KafkaGuardedProperty.problems(additionalProperties, guarded: KafkaGuardedProperty.producer)
            + RDKafkaConfig.problems(dictionary)
    }

    /// The librdkafka configuration keys and values; the one place configuration is rendered.
    var dictionary: [String: String] {
        var result: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientID,
            // TCP_NODELAY on broker sockets, as the Java client: a request is not held for an earlier one's ACK.
            "socket.nagle.disable": "true",
            "enable.idempotence": "true",
            "acks": "all",
            "message.timeout.ms": String(messageTimeout.inMilliseconds),
            "linger.ms": Self.milliseconds(linger),
            "compression.type": compression,
            "queue.buffering.max.messages": String(queueBufferingMaxMessages),
            "statistics.interval.ms": String(statisticsInterval.inMilliseconds),
            "log.queue": "true",
        ]
        for (key, value) in additionalProperties { result[key] = value }
        return result
    }

    /// `duration` in milliseconds with up to three decimals, as librdkafka's `*.ms` settings of type float take it
    /// (`"1"`, `"0.5"`, `"0.25"`).
    static func milliseconds(_ duration: Duration) -> String {
        let microseconds = max(0, duration.inMicroseconds)
        let fraction = microseconds % 1000
        guard fraction > 0 else { return String(microseconds / 1000) }
        var decimals = String(fraction)
        decimals = String(repeating: "0", count: 3 - decimals.count) + decimals
        while decimals.hasSuffix("0") { decimals.removeLast() }
        return "\(microseconds / 1000).\(decimals)"
    }
}
