/// Settings of a ``KafkaConsumer``. Every property has a default; ``dictionary`` renders the librdkafka keys.
///
/// The at-least-once recipe is fixed and not configurable: `enable.auto.commit=true`,
/// `enable.auto.offset.store=false` (offsets are stored by the consumer's offset trackers), and partition *p* of
/// every topic on one member: with ``Rebalancing/cooperative`` the group assigns the subscribed topics and the
/// consumer takes its companion topics' partition *p* with partition *p*; with ``Rebalancing/eager`` the `range`
/// assignor does it for every subscribed topic.
package struct KafkaConsumerConfiguration: Sendable {
    /// Comma-separated `host:port` list. Default: `"localhost:9092"`.
    package var bootstrapServers: String = "localhost:9092"
    /// The consumer group. Default: `"callpush"`.
    package var groupID: String = "callpush"
    /// Client id; make it unique per process. Default: `"callpush-consumer"`.
    package var clientID: String = "callpush-consumer"
    /// Where to start when the group has no committed offset. Default: `.earliest`.
    var autoOffsetReset: AutoOffsetReset = .earliest
    /// Group session timeout: how long the group waits for a member that stopped heartbeating (a SIGKILL, an OOM
    /// kill, a lost node) before it moves that member's partitions. With the eager `range` assignor a crashed worker
    /// restarted sooner stalls the whole group that long: its join starts a rebalance that every member joins and
    /// that completes only once the dead member has expired. Incoming calls wait meanwhile, so this is kept well
    /// under a ring timeout; librdkafka's 45 s (Kafka's default since 3.0) would outlast most rings. Default:
    /// `.seconds(10)`.
    package var sessionTimeout: Duration = .seconds(10)
    /// Group heartbeat interval: how soon a member learns that a rebalance has started (a member joined or left),
    /// which on a Kafka broker bounds how long the others wait for it to rejoin. Default: `.seconds(1)`.
    package var heartbeatInterval: Duration = .seconds(1)
    /// Maximum time between `rd_kafka_consumer_poll` calls before the member is evicted. Default: `.seconds(300)`.
    var maxPollInterval: Duration = .seconds(300)
    /// How long after giving partitions up in a cooperative rebalance this member waits for the group's second
    /// round before it reports it overdue (`callpush_kafka_rebalance_round_overdue`, an error log line). Default:
    /// nil, two session timeouts and 30 s, far beyond a healthy group's second round (a heartbeat and a join, well
    /// under a session timeout).
    var secondRoundTimeout: Duration?
    /// ``secondRoundTimeout`` or its default.
    var secondRoundDeadline: Duration { secondRoundTimeout ?? sessionTimeout * 2 + .seconds(30) }
    /// How often librdkafka commits the stored offsets. Default: `.seconds(1)`.
    package var autoCommitInterval: Duration = .seconds(1)
    /// librdkafka statistics interval; `.zero` turns statistics off. Default: `.seconds(15)`.
    package var statisticsInterval: Duration = .seconds(15)
    /// Prefetch bound in messages (`queued.min.messages`). Default: `100000` (librdkafka's).
    ///
    /// librdkafka documents it per partition, but a group consumer's partitions all feed one local queue and the
    /// bound is checked against that queue: fetching stops for every partition once this many messages are
    /// prefetched in total (or `queued.max.messages.kbytes`, librdkafka's 64 MB, whichever comes first). librdkafka
    /// before 2.3.0 looks again only up to 1 s later; the consumer wakes it when the queue has drained to half (see
    /// `KafkaFetchWakeup`, counted in `callpush_kafka_fetch_wakeups_total`), so a lower value bounds prefetch
    /// memory at the cost of more wake-ups, not of idle seconds. From librdkafka 2.3.0 on the wake-up cannot help (a
    /// backed-off partition waits out `fetch.queue.backoff.ms`, 1 s by default): set that property lower through
    /// ``additionalProperties`` there.
    var queuedMinMessages: Int = 100_000
    /// Longest time a broker holds a fetch waiting for data (`fetch.wait.max.ms`). A Kafka broker answers a waiting
    /// fetch as soon as data arrives (`fetch.min.bytes` is 1), so this only bounds the wait of an idle partition's
    /// fetch; librdkafka's mock broker (2.0.2) instead holds every empty fetch this long, whatever arrives meanwhile,
    /// so against it this is also how long a record can wait to be fetched. Low, because an incoming call must ring
    /// now: librdkafka's 500 ms would add up to half a second to every idle partition. Default: `.milliseconds(10)`.
    package var fetchWaitMax: Duration = .milliseconds(10)
    /// How long one `rd_kafka_consumer_poll` may block. Default: `.milliseconds(100)`.
    var pollTimeout: Duration = .milliseconds(100)
    /// Most messages handed to the delegate in one batch: one poll-loop turn takes what librdkafka has already
    /// fetched, without waiting for more, up to this many. Default: `500`.
    var deliveryBatchSize: Int = 500
    /// How often the poll thread stores the committable offsets. Default: `.milliseconds(100)`.
    package var offsetStoreInterval: Duration = .milliseconds(100)
    /// Back-pressure limits. Default: `BackPressure()`.
    package var backPressure: BackPressure = BackPressure()
    /// On revoke, how long to wait for in-flight messages of the revoked partitions. Default: `.seconds(5)`.
    package var revokeDrainTimeout: Duration = .seconds(5)
    /// On close, how long to wait for all in-flight messages. Default: `.seconds(10)`.
    package var closeDrainTimeout: Duration = .seconds(10)
    /// Extra librdkafka properties, applied last (they win). Default: `[:]`.
    package var additionalProperties: [String: String] = [:]
    /// How the group moves partitions when members join or leave. Default: `.cooperative`.
    package var rebalancing: Rebalancing = .cooperative
    /// Static membership (KIP-345, `group.instance.id`): a name that stays with the worker across restarts, such as a
    /// StatefulSet pod's. A member restarted with the same name within ``sessionTimeout`` gets its partitions back
    /// without a rebalance (Kafka 2.3 and later); a static member that stops does not leave the group, so its
    /// partitions wait ``sessionTimeout`` unless it comes back; two running members with one name fence each other
    /// (`FENCED_INSTANCE_ID`, fatal for the older). librdkafka 2.0.2's mock cluster ignores it. Default: nil (dynamic).
    package var groupInstanceID: String?

    package init() {}

    /// The group protocol: which partitions stop when the group changes.
    package enum Rebalancing: String, Sendable, CaseIterable {
        /// KIP-429 incremental rebalancing (`cooperative-sticky`): only the partitions that move stop; the others
        /// keep being consumed (and their offsets committed) throughout. Companion topics follow their partition.
        case cooperative
        /// Every member gives up every partition at each change and gets its share back (`range`): every partition
        /// stops for the whole rebalance. The only protocol of callpush before cooperative rebalancing: a group must
        /// change protocol with every member stopped (the broker refuses a member whose protocol no other shares).
        case eager

        var assignor: String { self == .cooperative ? "cooperative-sticky" : "range" }
    }

    /// In-flight limits: a partition is paused at its high watermark and resumed at the low one. A resume also wakes
    /// the partition's broker thread, which librdkafka 2.0.2 leaves asleep up to 1 s when it had nothing else to fetch
    /// (counted in `callpush_kafka_fetch_wakeups_total{reason="resumed"}`).
    package struct BackPressure: Sendable {
        /// Delivered but not completed messages per partition before it is paused. Default: `1000`.
        package var maxInFlightPerPartition: Int = 1000
        /// Delivered but not completed messages over all partitions before all are paused. Default: `10000`.
        package var maxInFlight: Int = 10_000
        /// Paused partitions resume when in-flight counts fall to this fraction of the limits. Default: `0.5`.
        var resumeFraction: Double = 0.5

        init() {}
    }

    /// `auto.offset.reset`.
    struct AutoOffsetReset: Hashable, Sendable {
        let value: String
        /// Start from the oldest retained message.
        static let earliest = AutoOffsetReset(value: "earliest")
        /// Start from the end (only messages produced after joining).
        static let latest = AutoOffsetReset(value: "latest")
    }

    /// Every property librdkafka refuses (unknown name, invalid value), checked without creating a client, and
    /// every ``KafkaGuardedProperty`` in ``additionalProperties``: one error each, code `configuration`, with a
    /// one-line reason that names the property.
    package var problems: [KafkaError] {
        KafkaGuardedProperty.problems(additionalProperties, guarded: KafkaGuardedProperty.consumer)
            + RDKafkaConfig.problems(dictionary)
    }

    /// The fetch wake-up policy for the rendered limits (`queued.min.messages`, `queued.max.messages.kbytes`,
    /// librdkafka's default 65536 KB when not set), with a margin of one delivery batch.
    var fetchWakeup: KafkaFetchWakeup {
        let rendered = dictionary
        let messages = rendered["queued.min.messages"].flatMap { Int($0) } ?? queuedMinMessages
        let kilobytes = rendered["queued.max.messages.kbytes"].flatMap { Int($0) } ?? 65_536
        return KafkaFetchWakeup(messageLimit: messages, byteLimit: kilobytes * 1024, margin: deliveryBatchSize)
    }

    /// The librdkafka configuration keys and values; the one place configuration is rendered.
    var dictionary: [String: String] {
        var result: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "group.id": groupID,
            "client.id": clientID,
            // TCP_NODELAY on broker sockets, as the Java client: a request is not held for an earlier one's ACK.
            "socket.nagle.disable": "true",
            "auto.offset.reset": autoOffsetReset.value,
            "session.timeout.ms": String(sessionTimeout.inMilliseconds),
            "heartbeat.interval.ms": String(heartbeatInterval.inMilliseconds),
            "max.poll.interval.ms": String(maxPollInterval.inMilliseconds),
            "auto.commit.interval.ms": String(autoCommitInterval.inMilliseconds),
            "statistics.interval.ms": String(statisticsInterval.inMilliseconds),
            "queued.min.messages": String(queuedMinMessages),
            "fetch.wait.max.ms": String(fetchWaitMax.inMilliseconds),
            "enable.auto.commit": "true",
            "enable.auto.offset.store": "false",
            "enable.partition.eof": "false",
            "partition.assignment.strategy": rebalancing.assignor,
            "log.queue": "true",
        ]
        if let groupInstanceID { result["group.instance.id"] = groupInstanceID }
        for (key, value) in additionalProperties { result[key] = value }
        return result
    }
}
