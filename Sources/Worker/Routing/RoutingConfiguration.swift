/// Output topics, retry tiers and receipts: how the worker routes every outcome. Every property has a default.
package struct RoutingConfiguration: Sendable, Hashable {
    /// Retry tiers and attempt budget. Default: ``RetryPolicy/init()``.
    package var retry: RetryPolicy = RetryPolicy()
    /// Default: "calls.dlq".
    package var deadLetterTopic: String = "calls.dlq"
    /// Default: "apns.tokens.invalidated".
    package var invalidatedTokensTopic: String = "apns.tokens.invalidated"
    /// Default: "calls.outcomes".
    package var outcomesTopic: String = "calls.outcomes"
    /// Produce one receipt per event to ``outcomesTopic``. Default: false.
    package var emitReceipts: Bool = false
    /// Bytes of the consumed value a dead letter carries: a longer value is cut to this many and `x-dlq-value-bytes`
    /// gives its whole size. Kafka refuses a record over the producer's `message.max.bytes` (1 000 000 by default)
    /// or the topic's `max.message.bytes`, so the dead letter of a value near those limits could never be written;
    /// the decoder takes events of up to 16 KiB, so every event worth replaying stays whole. Default: 65 536.
    package var deadLetterValueLimit: Int = 65_536
    /// Bytes of the consumed record's own headers (those callpush does not manage) that its retry and dead-letter
    /// records carry along, in order; the rest are dropped and `x-headers-dropped` counts them. Default: 16 384.
    var carriedHeaderLimit: Int = 16_384
    /// Bytes of an error text (`x-error-reason`) a retry or dead letter carries. Default: 512.
    var errorReasonLimit: Int = 512

    init() {}
}
