import Kafka

/// Bounds an event's `created_at` by what the worker knows, so that a call rings at most `ring_timeout_s` from when
/// a worker first read its event, whatever the producer's clock said.
///
/// A producer whose clock runs ahead writes a `created_at` in the future, and the ring deadline
/// (`created_at + ring_timeout_s`) moves as far: a consumer lagging behind would still send the incoming push after
/// the call was over, `apns-expiration` would keep it at APNs as long, and the VoIP payload's `ringDeadline` would
/// tell the app to ring on. So:
/// - a `created_at` later than the worker's clock counts as now (the dispatcher counts and logs the ones more than
///   ``reportedSkewMilliseconds`` ahead: `callpush_events_created_ahead_total`);
/// - an incoming call's ring deadline is at most the `x-deadline` an earlier hop wrote (a retry record carries the
///   deadline of its first hop; its value still holds the producer's `created_at`).
enum CreationTimeBound {
    /// Events ahead of the worker's clock by more than this are reported: less is the usual disagreement of two
    /// NTP-synchronised hosts (and the bound applies all the same).
    static let reportedSkewMilliseconds: Int64 = 1_000

    /// Bounds `event.createdAtMilliseconds` as above, `now` being the worker's clock when the record was handed over
    /// (ms since the epoch); returns how far `created_at` was ahead of `now` (0 when it was not).
    static func apply(to event: inout CallEvent, headers: [KafkaHeader], now: Int64) -> Int64 {
        var skew: Int64 = 0
        if event.createdAtMilliseconds > now {
            skew = event.createdAtMilliseconds - now
            event.createdAtMilliseconds = now
        }
        if event.type == .incoming, !headers.isEmpty,
            let deadline = HeaderCodec.integer(HeaderCodec.deadline, in: headers),
            deadline < event.ringDeadlineMilliseconds
        {
            let ring = Int64(event.ringTimeoutSeconds) * 1_000
            event.createdAtMilliseconds = deadline > ring ? deadline - ring : 0
        }
        return skew
    }
}
