/// Why an `incoming` event ended `cancelled` (the `reason` label of `callpush_cancellations_total`): each is a
/// ring after the caller hung up that the worker prevented.
enum CancelReason {
    /// Its call's stop event was found later in the log before the incoming was sent: in the same fetched batch, while
    /// reading ahead through the backlog of a newly assigned partition (a replay after a crash or rebalance), or by a
    /// history scan for a retry whose hang-up the partition's previous owner sent.
    static let lookAhead = "look_ahead"
    /// It arrived after its call's stop event had been handled (a replay, or a late retry tier record).
    static let afterStop = "after_stop"
    /// It waited behind its call's in-flight event when the stop event arrived.
    static let queued = "queued"
    /// APNs asked for a retry, but the call had ended meanwhile: not retried.
    static let retryAfterStop = "retry_after_stop"

    static let all = [lookAhead, afterStop, queued, retryAfterStop]
}
