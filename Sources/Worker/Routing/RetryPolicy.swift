import Kafka
import Telemetry

/// Delayed-retry tiers and the attempt budget. One topic per delay: Kafka has no per-record delay, and within one
/// tier records fall due in the order they were written, so each partition waits only for its head record.
///
/// Attempt 1 is the first try on the main topic. When attempt *n* fails transiently it goes to tier *n − 1*
/// (attempt 1 → `calls.retry.5s`, 2 → `calls.retry.30s`, 3 → `calls.retry.2m`) as attempt *n + 1*; attempts beyond
/// the tiers repeat the last tier; at ``maximumAttempts`` it is dead-lettered (`retries_exhausted`).
package struct RetryPolicy: Sendable, Hashable {
    package struct Tier: Sendable, Hashable {
        package var topic: String
        /// How long after the failure the record becomes due.
        package var delay: Duration

        package init(topic: String, delay: Duration) {
            self.topic = topic
            self.delay = delay
        }

        var delayMilliseconds: Int64 { delay.inMilliseconds }
    }

    /// Default: `calls.retry.5s` (5 s), `calls.retry.30s` (30 s), `calls.retry.2m` (2 min).
    package var tiers: [Tier] = [
        Tier(topic: "calls.retry.5s", delay: .seconds(5)),
        Tier(topic: "calls.retry.30s", delay: .seconds(30)),
        Tier(topic: "calls.retry.2m", delay: .seconds(120)),
    ]
    /// Attempts in total, the first included; more than `tiers.count + 1` repeat the last tier. Default: 4 (one try
    /// plus one per default tier).
    package var maximumAttempts: Int = 4
    /// Retry deadline of stop-ringing events after `created_at` (incoming events use their ring deadline).
    /// Default: 10 minutes.
    var stopEventRetryWindow: Duration = .seconds(600)

    init() {}

    /// The tier whose topic is `topic`, if any.
    func tierIndex(forTopic topic: String) -> Int? { tiers.firstIndex { $0.topic == topic } }

    /// The tier a failed attempt `attempt` goes to (the last one once the tiers are used up), or nil when the
    /// attempt budget is spent or there are no tiers.
    func tierIndex(afterFailedAttempt attempt: Int) -> Int? {
        guard attempt >= 1, attempt < maximumAttempts, !tiers.isEmpty else { return nil }
        return min(attempt - 1, tiers.count - 1)
    }

    /// When a consumed record may be handed out: nil for records not from a retry tier (due at once); else its
    /// `x-not-before` header, or — when that is missing or malformed — its timestamp plus the tier's delay; never later
    /// than `now` plus the tier's delay. The Kafka layer holds a record that is not yet due and pauses its partition
    /// until then, every later record of the partition behind it.
    ///
    /// The bound: a worker writes `x-not-before` as the time of the failure plus the tier's delay, so a later due time
    /// comes from a writer whose clock ran ahead, or from a record written by something else (a timestamp near
    /// `Int64.max` is a valid Kafka timestamp). Without it, such a record and its whole partition would wait for that
    /// clock, and the timestamp plus the delay could overflow. The bound moves with `now`: ask once per record (the
    /// worker does when the consumer first hands it out; held until then, it is due when handed out again).
    func notBefore(_ record: KafkaMessage, now: Int64) -> Int64? {
        guard let index = tierIndex(forTopic: record.topic) else { return nil }
        let delay = tiers[index].delayMilliseconds
        let latest = now.saturatingAdd(delay)
        if let header = HeaderCodec.integer(HeaderCodec.notBefore, in: record.headers) { return min(header, latest) }
        return min(record.timestampMilliseconds ?? 0, now).saturatingAdd(delay)
    }
}
