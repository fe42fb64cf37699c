/// Decides when the consumer must wake librdkafka's fetcher after draining a full local queue.
///
/// librdkafka before 2.3.0 takes a partition off its broker's fetch list once the local queue that partition feeds
/// holds `queued.min.messages` messages or `queued.max.messages.kbytes`, and looks at it again only when that
/// broker's thread next wakes up: on its own, up to 1 s later (librdkafka's fixed `rd_kafka_max_block_ms`; from
/// 2.3.0 on it is `fetch.queue.backoff.ms`, default 1 s too). With a group consumer every partition's messages go
/// to the one consumer queue, and the limits are checked against that queue: all partitions stop together once the
/// messages prefetched *in total* reach `queued.min.messages`, however few each partition holds. A consumer that
/// drains the queue in less than a second then sits idle until the broker thread wakes up (docs/performance.md,
/// "Kafka consumer").
///
/// The poll thread reports the queue's length after each batch. Once it has been within `margin` of a limit (the
/// fetcher may have stopped) and then falls to half of the limits, ``observe(queueLength:takenMessages:takenBytes:)``
/// answers `true` once: the consumer then sends the partitions' leaders a request (see
/// `KafkaConsumer.wakeFetcher()`), which wakes their broker threads, and fetching resumes while half the queue is
/// still there to work on. A consumer slower than the limit per second never gets there (the fetcher's own wake-up
/// refills the queue first) and sends nothing.
struct KafkaFetchWakeup: Sendable {
    /// `queued.min.messages`.
    let messageLimit: Int
    /// `queued.max.messages.kbytes` in bytes.
    let byteLimit: Int
    /// The most messages the queue can lose between two reports (one poll-loop batch).
    let margin: Int
    /// Whether the queue has been near a limit since the last wake-up.
    private(set) var armed = false
    /// Average payload (key + value) bytes of the messages taken in the last batch: the queue's bytes are estimated
    /// from its length (librdkafka does not tell them).
    private var averageMessageBytes = 0.0

    init(messageLimit: Int, byteLimit: Int, margin: Int) {
        self.messageLimit = max(1, messageLimit)
        self.byteLimit = max(1, byteLimit)
        self.margin = max(0, margin)
    }

    /// Reports the consumer queue's length after a poll-loop batch took `takenMessages` messages of `takenBytes`
    /// payload bytes. Returns `true` when the fetcher should be woken now.
    mutating func observe(queueLength: Int, takenMessages: Int, takenBytes: Int) -> Bool {
        if takenMessages > 0 { averageMessageBytes = Double(takenBytes) / Double(takenMessages) }
        let estimatedBytes = Double(queueLength) * averageMessageBytes
        if queueLength + margin >= messageLimit || estimatedBytes + Double(margin) * averageMessageBytes >= Double(byteLimit) {
            armed = true
            return false
        }
        guard armed, queueLength <= messageLimit / 2, estimatedBytes <= Double(byteLimit / 2) else { return false }
        armed = false
        return true
    }
}
