/// Output topics, retry tiers and receipts: how the worker routes every outcome. Every property has a default.
public struct RoutingConfiguration: Sendable, Hashable {
    /// Retry tiers and attempt budget. Default: ``RetryPolicy/init()``.
    public var retry: RetryPolicy = RetryPolicy()
    /// Default: "calls.dlq".
    public var deadLetterTopic: String = "calls.dlq"
    /// Default: "apns.tokens.invalidated".
    public var invalidatedTokensTopic: String = "apns.tokens.invalidated"
    /// Default: "calls.outcomes".
    public var outcomesTopic: String = "calls.outcomes"
    /// Produce one receipt per event to ``outcomesTopic``. Default: false.
    public var emitReceipts: Bool = false

    init() {}
}
