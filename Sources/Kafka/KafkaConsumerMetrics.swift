import Synchronization
import Telemetry

/// The consumer's Prometheus series on the caller's registry.
final class KafkaConsumerMetrics: Sendable {
    static let lagName = "callpush_kafka_consumer_lag"
    static let rttName = "callpush_kafka_broker_rtt_seconds"

    let registry: MetricsRegistry
    let rebalances: Counter
    /// Reasons a partition is paused: `backpressure`, `retry_due`, `rebalance`.
    static let pauseReasons = ["backpressure", "retry_due", "rebalance"]
    /// `callpush_kafka_paused_partitions{reason}`.
    let paused: [String: Gauge]
    /// `callpush_kafka_partition_pauses_total{reason}`.
    let pauses: [String: Counter]
    let offsetStoreFailures: Counter
    let commitsRefused: Counter
    let uncommittedHandedOver: Counter
    /// `callpush_kafka_assignment_wait_seconds`: how long the first record of each newly assigned partition had
    /// waited when this consumer read it.
    let assignmentWait: Histogram
    /// Why the consumer woke librdkafka's fetcher: it drained a full local queue (``KafkaFetchWakeup``), it resumed
    /// partitions, or a rebalance callback returned (librdkafka paused the partitions that stay while it was pending).
    enum FetchWakeupReason: String, CaseIterable {
        case queueDrained = "queue_drained"
        case resumed
        case rebalanced
    }
    /// `callpush_kafka_fetch_wakeups_total{reason}`.
    let fetchWakeups: [FetchWakeupReason: Counter]
    static let offsetResetsName = "callpush_kafka_offset_resets_total"
    /// `callpush_kafka_assigned_partitions{topic}` of the subscribed topics.
    private let assigned: [String: Gauge]
    private let lagSeries = Mutex<Set<KafkaTopicPartition>>([])
    static let joinStateName = "callpush_kafka_group_join_state"
    /// `callpush_kafka_group_assignment_size`, `callpush_kafka_group_rebalance_age_seconds`.
    private let groupAssignmentSize: Gauge
    private let rebalanceAge: Gauge
    /// `callpush_kafka_rebalance_round_overdue`.
    let roundOverdue: Gauge
    /// The last group status applied: its join state's series is the one at 1.
    private let lastGroup = Mutex<KafkaGroupStatus?>(nil)

    /// `topics`: the subscription, whose offset-reset series are registered at once (0 shows, not nothing).
    init(registry: MetricsRegistry, topics: [String] = []) {
        self.registry = registry
        rebalances = registry.counter(
            "callpush_kafka_rebalances_total",
            help: "Partition assignments and revocations seen by this consumer."
        )
        paused = registry.gauges(
            "callpush_kafka_paused_partitions", help: "Partitions this consumer has paused, by reason.", label: "reason",
            keys: Self.pauseReasons) { $0 }
        pauses = registry.counters(
            "callpush_kafka_partition_pauses_total", help: "Times this consumer paused a partition, by reason.",
            label: "reason", keys: Self.pauseReasons) { $0 }
        offsetStoreFailures = registry.counter(
            "callpush_kafka_offset_store_failures_total",
            help: "Partitions whose rd_kafka_offsets_store entry failed."
        )
        commitsRefused = registry.counter(
            "callpush_kafka_commits_refused_total",
            help: "Offset commits the group refused because it was rebalancing (with eager rebalancing, intake pauses until the rebalance is done)."
        )
        uncommittedHandedOver = registry.counter(
            "callpush_kafka_uncommitted_handed_over_total",
            help: "Messages this consumer read from partitions it gave away (revoked, or closed) past their last commit "
                + "that succeeded: their next owner reads them again (at-least-once repeats caused by rebalances)."
        )
        assignmentWait = registry.histogram(
            "callpush_kafka_assignment_wait_seconds",
            help: "For each partition of the calls topic newly assigned to this consumer, how long its first record had "
                + "waited (since its timestamp) when it was read: the wait of calls whose partition moved, plus any backlog.",
            buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120])
        fetchWakeups = registry.counters(
            "callpush_kafka_fetch_wakeups_total",
            help: "Requests the consumer sent to wake librdkafka's fetcher, by reason: it drained a full local queue "
                + "(librdkafka before 2.3.0), or it resumed partitions (librdkafka 2.0.2 does not wake their broker).",
            label: "reason", keys: FetchWakeupReason.allCases, value: \.rawValue)
        assigned = registry.gauges(
            "callpush_kafka_assigned_partitions",
            help: "Partitions of the topic assigned to this consumer (how the group spreads them over its members).",
            label: "topic", keys: topics) { $0 }
        groupAssignmentSize = registry.gauge(
            "callpush_kafka_group_assignment_size",
            help: "Partitions of the subscribed topics the group gave this consumer at its last sync, from librdkafka's "
                + "statistics: ahead of callpush_kafka_assigned_partitions while an assignment waits for the poll thread.")
        rebalanceAge = registry.gauge(
            "callpush_kafka_group_rebalance_age_seconds",
            help: "Time since this consumer's last rebalance, from librdkafka's statistics.")
        roundOverdue = registry.gauge(
            "callpush_kafka_rebalance_round_overdue",
            help: "1 while the second round of a cooperative rebalance in which this consumer gave partitions up is "
                + "overdue: those partitions may be owned by nobody (their calls do not ring) until the group rebalances again.")
        for topic in topics { _ = offsetResets(topic: topic) }
    }

    /// Applies the group part of a statistics snapshot; returns the one applied before.
    func apply(_ group: KafkaGroupStatus) -> KafkaGroupStatus? {
        groupAssignmentSize.set(Double(group.assignmentSize))
        rebalanceAge.set(Double(group.rebalanceAge.inMilliseconds) / 1000)
        let previous = lastGroup.withLock { last in
            defer { last = group }
            return last
        }
        if let previous, previous.joinState != group.joinState { joinState(previous.joinState).set(0) }
        joinState(group.joinState).set(1)
        return previous
    }

    /// `callpush_kafka_group_join_state{state}`.
    private func joinState(_ state: String) -> Gauge {
        registry.gauge(
            Self.joinStateName,
            help: "1 for librdkafka's current group join state of this consumer (steady once a rebalance is done; "
                + "a rebalance that does not finish stays in a wait-* state), 0 for states it was in before.",
            labels: ["state": state])
    }

    /// Sets `callpush_kafka_assigned_partitions` from what is owned now.
    func setAssigned(_ owned: some Sequence<KafkaTopicPartition>) {
        var counts: [String: Int] = [:]
        for partition in owned { counts[partition.topic, default: 0] += 1 }
        for (topic, gauge) in assigned { gauge.set(Double(counts[topic] ?? 0)) }
    }

    /// `callpush_kafka_offset_resets_total{topic}`.
    func offsetResets(topic: String) -> Counter {
        registry.counter(
            Self.offsetResetsName,
            help: "Partitions whose fetch position librdkafka reset after a fetch error, by topic: offset out of range, "
                + "the records were deleted (retention) before this group read them and are skipped.",
            labels: ["topic": topic]
        )
    }

    /// Applies a statistics snapshot: lag of the partitions we own and broker round-trip times.
    func apply(_ statistics: KafkaStatistics, owned: Set<KafkaTopicPartition>) {
        for (partition, lag) in statistics.consumerLag where owned.contains(partition) {
            registry.gauge(
                Self.lagName,
                help: "Consumer lag (high watermark minus committed offset) of an owned partition, from librdkafka.",
                labels: Self.labels(partition)
            ).set(Double(lag))
            lagSeries.withLock { _ = $0.insert(partition) }
        }
        for (broker, seconds) in statistics.brokerRTT {
            registry.gauge(
                Self.rttName,
                help: "Broker round-trip time p99 from librdkafka statistics.",
                labels: ["broker": broker]
            ).set(seconds)
        }
    }

    /// Drops the lag series of partitions we no longer own.
    func forget(_ partitions: [KafkaTopicPartition]) {
        let removed = lagSeries.withLock { series in partitions.filter { series.remove($0) != nil } }
        for partition in removed { registry.remove(Self.lagName, labels: Self.labels(partition)) }
    }

    private static func labels(_ partition: KafkaTopicPartition) -> [String: String] {
        ["topic": partition.topic, "partition": String(partition.partition)]
    }
}
