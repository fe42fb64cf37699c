import Synchronization
package import Telemetry

/// The worker's metrics (prefix `callpush_`, base units, bounded labels). Handles are looked up once per
/// label value and cached by the registry; updates are lock-free.
package struct WorkerMetrics: Sendable {
    package let registry: MetricsRegistry
    /// `callpush_end_to_end_latency_seconds`: event `created_at` → APNs answer.
    package let endToEndLatency: Histogram
    /// `callpush_worker_processing_seconds`: the worker's own time per event, from the consumer handing the record
    /// over to its outcome being final and every record it produced acknowledged.
    package let processing: Histogram
    /// `callpush_worker_stage_seconds{stage="dispatch"}`: hand-over → the push handed to the APNs client (decode,
    /// map, the read-ahead, waiting behind the call's push in flight). The APNs leg that follows is
    /// `callpush_apns_request_duration_seconds`.
    package let dispatchStage: Histogram
    /// `callpush_worker_stage_seconds{stage="acknowledge"}`: an outcome's records handed to the Kafka producer →
    /// the last one acknowledged (for outcomes with records; the receipt alone with receipts on).
    package let acknowledgeStage: Histogram

    /// Buckets of the worker's own time and its stages: fine from 0.1 ms to 25 ms, where the latency target (5 ms
    /// at p99, docs/performance.md) and Kafka's acknowledgement times lie, so a p99 between 10 and 25 ms is not read as about 25 ms. 1.5 ms
    /// splits the bucket most acknowledgements fall in (the producer's 1 ms linger, then the broker), so their p50 is
    /// not read as that bucket's midpoint; 4 ms the one below the 5 ms bound.
    static let processingBuckets: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.05,
        0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
    ]
    /// `callpush_inflight_events`: consumed events whose outcome is not final yet.
    package let inFlight: Gauge
    /// `callpush_outcomes_total{outcome}`, looked up once: every event counts one.
    private let outcomes: CaseCounters<Outcome>
    /// `callpush_cancellations_total{reason}` (see ``CancelReason``), looked up once.
    private let cancellations: [String: Counter]
    /// `callpush_read_ahead_released_early_total{reason}`.
    let readAheadReleasedEarly: [ReadAheadCutShort: Counter]
    /// `callpush_read_ahead_scans_total{scan,result}`: scans of newly assigned calls partitions (their backlog, the
    /// history before it), by how they ended.
    let readAheadScans: [ReadAheadScan.Kind: [BacklogScanOutcome.Result: Counter]]
    /// `callpush_read_ahead_scan_seconds{scan}`: how long each scan took, from when it was asked for.
    let readAheadScanDuration: [ReadAheadScan.Kind: Histogram]
    /// `callpush_read_ahead_scan_ended_calls_total`: stop events the scans found (their calls marked ended).
    let readAheadScanEndedCalls: Counter
    /// `callpush_key_mismatches_total`: events whose Kafka key is not their call id (sent all the same).
    let keyMismatches: Counter
    /// `callpush_events_created_ahead_total`: events whose `created_at` was more than 1 s ahead of the worker's clock.
    let createdAhead: Counter
    /// `callpush_ignored_headers_total`: events of the calls topic carrying headers only callpush writes (ignored).
    let ignoredHeaders: Counter
    /// `callpush_custom_keys_skipped_total`: `custom` members the mapper left out, as callpush writes those keys itself.
    let skippedCustomKeys: Counter
    /// `callpush_events_consumed_total{topic}`, looked up once per topic.
    private let consumedByTopic = CounterCache()

    package init(registry: MetricsRegistry) {
        self.registry = registry
        endToEndLatency = registry.histogram(
            "callpush_end_to_end_latency_seconds",
            help: "Time from the event's created_at to APNs' answer.",
            buckets: [0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
        )
        processing = registry.histogram(
            "callpush_worker_processing_seconds",
            help: "The worker's own time per event: record handed over by the consumer to outcome final and its records acknowledged.",
            buckets: Self.processingBuckets
        )
        let stageHelp = "Stages of the worker's own time per event: dispatch (hand-over to push handed to the APNs client), "
            + "acknowledge (outcome routed to its records acknowledged by Kafka)."
        dispatchStage = registry.histogram(
            "callpush_worker_stage_seconds", help: stageHelp,
            labels: ["stage": "dispatch"], buckets: Self.processingBuckets)
        acknowledgeStage = registry.histogram(
            "callpush_worker_stage_seconds", help: stageHelp,
            labels: ["stage": "acknowledge"], buckets: Self.processingBuckets)
        inFlight = registry.gauge("callpush_inflight_events", help: "Consumed events whose outcome is not final yet.")
        keyMismatches = registry.counter(
            "callpush_key_mismatches_total",
            help: "Events whose Kafka key is not their call_id: their call's other events may reach another partition.")
        createdAhead = registry.counter(
            "callpush_events_created_ahead_total",
            help: "Events whose created_at was more than 1 s ahead of the worker's clock; their ring counts from when read.")
        ignoredHeaders = registry.counter(
            "callpush_ignored_headers_total",
            help: "Events of the calls topic carrying headers only callpush writes (x-attempt, x-deadline, x-original-*, …): those headers were ignored.")
        skippedCustomKeys = registry.counter(
            "callpush_custom_keys_skipped_total",
            help: "Members of events' custom objects left out of the payload: callpush writes those keys itself (aps, pushType, callId, …).")
        outcomes = CaseCounters { outcome in
            registry.counter("callpush_outcomes_total", help: "Final outcome of each consumed event.",
                             labels: ["outcome": outcome.rawValue])
        }
        readAheadReleasedEarly = registry.counters(
            "callpush_read_ahead_released_early_total",
            help: "Incoming calls the read-ahead let go before it had read through their partition's backlog (a stop "
                + "event further on is not known before they ring), by reason: limit (held events), timeout (no progress), "
                + "history_scan_failed (retry records whose scan of the partition's history failed).",
            label: "reason", keys: ReadAheadCutShort.allCases, value: \.rawValue)
        var scans: [ReadAheadScan.Kind: [BacklogScanOutcome.Result: Counter]] = [:]
        var scanDurations: [ReadAheadScan.Kind: Histogram] = [:]
        for kind in ReadAheadScan.Kind.allCases {
            for result in BacklogScanOutcome.Result.allCases {
                scans[kind, default: [:]][result] = registry.counter(
                    "callpush_read_ahead_scans_total",
                    help: "Scans of a newly assigned calls partition for stop events (scan: backlog, what it held at "
                        + "assignment; history, before it, for retry records), by result: completed (the calls they held "
                        + "then go, meeting those hang-ups), stopped (read through or revoked first), failed.",
                    labels: ["scan": kind.rawValue, "result": result.rawValue])
            }
            scanDurations[kind] = registry.histogram(
                "callpush_read_ahead_scan_seconds",
                help: "Time each scan took, from when it was asked for to its end; the incoming calls it is for wait meanwhile.",
                labels: ["scan": kind.rawValue],
                buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])
        }
        readAheadScans = scans
        readAheadScanDuration = scanDurations
        readAheadScanEndedCalls = registry.counter(
            "callpush_read_ahead_scan_ended_calls_total",
            help: "Stop events found by scans: their calls are marked ended before their incoming events are read.")
        cancellations = registry.counters(
            "callpush_cancellations_total",
            help: "Incoming events not sent because their call had ended (rings after a hang-up prevented), by reason.",
            label: "reason", keys: CancelReason.all) { $0 }
    }

    /// `callpush_events_consumed_total{topic}` (the dispatcher looks it up once per run of one topic in a batch).
    func consumedCounter(topic: String) -> Counter {
        consumedByTopic.counter(for: topic) {
            registry.counter("callpush_events_consumed_total", help: "Events consumed, by topic.", labels: ["topic": topic])
        }
    }

    package func outcomeCounter(_ outcome: Outcome) -> Counter { outcomes[outcome] }

    /// Counts one final outcome and its detail: the retry tier topic, the dead-letter or invalidation reason.
    func record(outcome: Outcome, reason: String?, retryTier: String?) {
        outcomeCounter(outcome).increment()
        switch outcome {
        case .retried:
            registry.counter("callpush_retries_total", help: "Events sent to a retry tier, by tier topic.",
                             labels: ["tier": retryTier ?? "unknown"]).increment()
        case .deadLettered:
            registry.counter("callpush_dead_letters_total", help: "Events dead-lettered, by reason.",
                             labels: ["reason": Self.boundedReason(reason)]).increment()
        case .cancelled:
            cancellations[reason ?? CancelReason.afterStop]?.increment()
        case .invalidated:
            registry.counter("callpush_token_invalidations_total", help: "Device tokens reported invalid, by APNs reason.",
                             labels: ["reason": Self.boundedReason(reason)]).increment()
        default:
            break
        }
    }

    /// `callpush_records_refused_total{topic}`: records Kafka refused for good; each abandoned its event. (The error
    /// is in the log line: a label for it would make the series appear only at the first refusal, which `increase`
    /// does not see.)
    @discardableResult
    func refusedRecords(topic: String) -> Counter {
        registry.counter(
            "callpush_records_refused_total",
            help: "Records Kafka refused for good (too large, invalid, not authorised), by topic; each ended its event as abandoned.",
            labels: ["topic": topic])
    }

    /// `callpush_produce_failures_total{topic}`: produce attempts that failed and were retried.
    @discardableResult
    func produceFailures(topic: String) -> Counter {
        registry.counter("callpush_produce_failures_total", help: "Produce attempts that failed and were retried, by topic.",
                         labels: ["topic": topic])
    }

    /// Reasons come from closed sets (decoder codes, APNs reasons), but `missing_field:<path>` carries a path and
    /// APNs may invent reasons: keep the label set bounded.
    static func boundedReason(_ reason: String?) -> String {
        guard let reason, !reason.isEmpty else { return "unknown" }
        let base = reason.split(separator: ":").first.map(String.init) ?? reason
        return base.utf8.count <= 48 ? base : "other"
    }
}

/// Counters by one label value, so the hot path skips the registry's lookup (label rendering, its lock) per event.
private final class CounterCache: Sendable {
    private let counters = Mutex<[String: Counter]>([:])

    func counter(for value: String, make: () -> Counter) -> Counter {
        if let counter = counters.withLock({ $0[value] }) { return counter }
        let counter = make()
        counters.withLock { $0[value] = counter }
        return counter
    }
}
