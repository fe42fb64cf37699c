/// Delayed-retry tiers (one topic per delay, kafka-notes.md §1.5) and the attempt budget.
///
/// Attempt 1 is the first try on the main topic. When attempt *n* fails transiently it goes to tier *n − 1*
/// (attempt 1 → `calls.retry.5s`, 2 → `calls.retry.30s`, 3 → `calls.retry.2m`) as attempt *n + 1*; attempts beyond
/// the tiers repeat the last tier; at ``maximumAttempts`` it is dead-lettered (`retries_exhausted`).
public struct RetryPolicy: Sendable, Hashable {
    public struct Tier: Sendable, Hashable {
        public var topic: String
        /// How long after the failure the record becomes due.
        public var delay: Duration

        public init(topic: String, delay: Duration) {
            self.topic = topic
            self.delay = delay
        }

        var delayMilliseconds: Int64 { delay.inMilliseconds }
    }

    /// Default: `calls.retry.5s` (5 s), `calls.retry.30s` (30 s), `calls.retry.2m` (2 min).
    public var tiers: [Tier] = [
        Tier(topic: "calls.retry.5s", delay: .seconds(5)),
        Tier(topic: "calls.retry.30s", delay: .seconds(30)),
        Tier(topic: "calls.retry.2m", delay: .seconds(120)),
    ]
    /// Attempts in total, the first included; more than `tiers.count + 1` repeat the last tier. Default: 4 (one try
    /// plus one per default tier).
    public var maximumAttempts: Int = 4
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
    /// `x-not-before` header, or — when that is missing or malformed — its timestamp plus the tier's delay.
    /// The Kafka layer holds a record that is not yet due and pauses its partition until then.
    func notBefore(_ record: InboundRecord) -> Int64? {
        guard let index = tierIndex(forTopic: record.topic) else { return nil }
        if let header = HeaderCodec.integer(HeaderCodec.notBefore, in: record.headers) { return header }
        return record.timestampMilliseconds + tiers[index].delayMilliseconds
    }

    /// Whether `record` may be processed at `now`.
    func isDue(_ record: InboundRecord, now: Int64) -> Bool {
        guard let due = notBefore(record) else { return true }
        return now >= due
    }
}
