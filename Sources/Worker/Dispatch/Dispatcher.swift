import APNs
import Kafka
import Synchronization
import Telemetry

/// The fan-out core: one consumed record in, exactly one final ``Outcome`` out.
///
/// For each record: decode → map → admit to the ``CallTracker`` (per-call order, expiry, cancellation by hang-up)
/// → send through the ``PushSender`` → route the answer with the ``OutcomeRouter`` → produce every record the
/// outcome needs (invalidation, retry tier, dead letter, receipt) → once all are acknowledged, count the outcome
/// and call `done`, after which the caller may store the record's offset.
///
/// A record whose follow-up produce fails is re-produced with back-off until it succeeds or ``stop()`` is called;
/// after `stop()` such records never call `done`, so their offsets are not stored and they are consumed again
/// (at-least-once). A record Kafka refuses for good (``KafkaError/refusesRecord``) is not
/// produced again: its event ends as ``Outcome/abandoned``, so its partition's offset moves on.
///
/// Its parts: the in-flight event (``Pending``, `Dispatcher+Pending.swift`), the read-ahead's scans and timeouts
/// (`Dispatcher+ReadAhead.swift`), and the outcome's records to Kafka (`Dispatcher+Delivery.swift`).
///
/// - Important: thread-safe. `handle` may be called from the consumer thread while answers arrive on I/O threads.
final class Dispatcher: Sendable {
    let configuration: DispatcherConfiguration
    let decoder: CallEventDecoder
    /// Replaced by ``updateMapping(_:)`` (a configuration reload).
    private let mapper: Mutex<PushMapper>
    private let router: OutcomeRouter
    let tracker: CallTracker<Pending>
    let gate: ReadAheadGate<Pending>
    /// Reads newly assigned partitions' backlogs for stop events (nil: the read-ahead is bounded by its limits).
    let scanner: (any BacklogScanner)?
    /// The events in flight, and the finished ones until the consumer's thread frees them (``releaseFinished()``).
    private let ledger = InFlightLedger<Pending>()
    private let sender: any PushSender
    let producer: any RecordProducer
    /// Runs the delayed work: the read-ahead's timeout and the back-off of a failed produce (the sender's event loops).
    let timers: any JobScheduler
    let metrics: WorkerMetrics
    private let clock: any WallClock
    /// Stage timings and in-flight ages (spans inside the process); ``clock`` is for event times.
    let monotonic: any MonotonicClock
    let logger: Logger
    /// The retry tier topics, to tell a retry record among an outcome's records.
    /// (A few: a linear look costs less than hashing the topic of every event.)
    private let retryTopics: [String]
    let stopped = Atomic<Bool>(false)
    /// Events whose Kafka key is not their call id (``noteKeyMismatch(_:callID:)`` logs some).
    private let keyMismatches = DoublingLogSampler()
    /// Events created ahead of the worker's clock (``noteCreatedAhead(_:event:skew:)`` logs some).
    private let createdAhead = DoublingLogSampler()
    /// The threads that enter it, by entry, when started (tests hold them to ARCHITECTURE.md).
    let entries = DispatcherEntryLog()

    init(
        configuration: DispatcherConfiguration = DispatcherConfiguration(),
        sender: any PushSender,
        producer: any RecordProducer,
        timers: any JobScheduler,
        scanner: (any BacklogScanner)? = nil,
        metrics: WorkerMetrics,
        clock: any WallClock = SystemWallClock(),
        monotonic: any MonotonicClock = SystemMonotonicClock(),
        logger: Logger = .disabled
    ) {
        self.configuration = configuration
        self.decoder = CallEventDecoder(configuration: configuration.decoder)
        self.mapper = Mutex(PushMapper(configuration: configuration.mapping))
        self.router = OutcomeRouter(configuration: configuration.routing)
        self.tracker = CallTracker(configuration: configuration.calls, clock: clock)
        var readAhead = configuration.readAhead
        if scanner == nil { readAhead.scansBacklog = false }
        self.gate = ReadAheadGate(configuration: readAhead, clock: monotonic)
        self.scanner = scanner
        self.sender = sender
        self.producer = producer
        self.timers = timers
        self.metrics = metrics
        self.clock = clock
        self.monotonic = monotonic
        self.logger = logger
        self.retryTopics = configuration.routing.retry.tiers.map(\.topic)
        // Every output topic's failure series exists from the start, so dashboards and alerts see 0, not nothing.
        let routing = configuration.routing
        var outputs = routing.retry.tiers.map(\.topic) + [routing.deadLetterTopic, routing.invalidatedTokensTopic]
        if routing.emitReceipts { outputs.append(routing.outcomesTopic) }
        for topic in outputs {
            metrics.produceFailures(topic: topic)
            metrics.refusedRecords(topic: topic)
        }
    }

    /// Events handed to ``handle(_:done:)`` whose `done` has not run yet.
    var inFlightCount: Int { ledger.liveCount }

    /// How long the oldest event handed to ``handle(_:done:)`` has waited for its outcome, in seconds (0 if none).
    var oldestInFlightAgeSeconds: Double {
        ledger.oldestStart.map { Double(max(0, monotonic.uptimeMicroseconds() - $0)) / 1_000_000 } ?? 0
    }

    /// Ended calls the worker remembers, and how far back that memory reaches (``CallTracker/endedCallMemory``).
    var endedCallMemory: (remembered: Int, reachSeconds: Double) { tracker.endedCallMemory }

    /// Maps events consumed from now on with `mapping` (per-app texts after a configuration reload).
    func updateMapping(_ mapping: MappingConfiguration) {
        mapper.withLock { $0 = PushMapper(configuration: mapping) }
    }

    /// Settles the outcomes of home-thread settlements (``HomeThreadSettlement``) and frees the events finished since
    /// the last call: call on the thread that calls ``handle(_:settlement:)``, which made them (see ``InFlightLedger``).
    func releaseFinished() {
        entries.note(.release)
        // Consecutive events of one settlement (a consumed batch's) are settled together.
        var records: [KafkaMessage] = []
        var current: (any HomeThreadSettlement)?
        ledger.releaseKept { pending in
            guard pending.awaitsHomeSettlement, let settlement = pending.homeSettlement else { return }
            if let current, current !== settlement {
                current.done(contentsOf: records)
                records.removeAll(keepingCapacity: true)
            }
            current = settlement
            records.append(pending.record)
        }
        if let current { current.done(contentsOf: records) }
    }

    /// Stops re-producing failed records (shutdown): their events stay unfinished and are consumed again later.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        // The poll thread no longer frees finished events (and a kept event holds this dispatcher).
        ledger.close()
    }

    /// Handles one consumed record. `done` runs exactly once, with the event's outcome, when that outcome is final
    /// and every record it produced is acknowledged (never, for a record still unacknowledged at ``stop()``).
    func handle(_ record: KafkaMessage, done: @escaping @Sendable (Outcome) -> Void) {
        handle([record], settlement: ClosureSettlement(done: { _, outcome in done(outcome) }))
    }

    /// Handles the records one fetch brought, in order, as ``handle(_:done:)`` does each — after looking ahead:
    /// every stop event of the batch marks its call ended first, so an `incoming` earlier in the batch whose call
    /// ends later in it is cancelled instead of ringing; and `incoming` events from the backlog of a newly assigned
    /// partition wait in the ``ReadAheadGate`` until the worker has read through that backlog.
    /// Each record leaves through `settlement`.
    func handle(_ batch: [KafkaMessage], settlement: any RecordSettlement) {
        entries.note(.batch)
        guard !batch.isEmpty else { return }
        // Once per batch: the in-flight count, the ledger (one ticket each, in order), the mapper in force.
        let handedOver = monotonic.uptimeMicroseconds()
        let wallNow = clock.now().milliseconds
        let (firstTicket, live) = ledger.begin(count: batch.count, at: handedOver)
        metrics.inFlight.set(live)
        let mapper = self.mapper.withLock { $0 }
        let homeSettlement = settlement as? any HomeThreadSettlement
        // Per run of one topic (a batch's records come in runs): its consumed counter, and whether it is a retry tier.
        var topicRun: (topic: String, counter: Counter, isCallsTopic: Bool)?
        var admissible: [Pending] = []
        admissible.reserveCapacity(batch.count)
        var stops = 0
        for (index, record) in batch.enumerated() {
            let run: (topic: String, counter: Counter, isCallsTopic: Bool)
            if let topicRun, topicRun.topic == record.topic {
                run = topicRun
            } else {
                run = (record.topic, metrics.consumedCounter(topic: record.topic), !retryTopics.contains(record.topic))
                topicRun = run
            }
            run.counter.increment()
            guard let pending = prepare(record, isCallsTopic: run.isCallsTopic, settlement: settlement,
                                        homeSettlement: homeSettlement,
                                        ticket: firstTicket + UInt64(index),
                                        handedOver: handedOver, now: wallNow, mapper: mapper)
            else { continue }
            if pending.event.type.stopsRinging { stops += 1 }
            admissible.append(pending)
        }
        // Stop events look back over the batch (a batch without any needs no call-id sets).
        var lastStop: [CallKey: Int] = [:]
        if stops > 0 {
            // Sized once: growing them from empty rehashed every call id a few times per batch.
            lastStop.reserveCapacity(stops)
            var ringing: Set<CallKey> = []
            ringing.reserveCapacity(admissible.count - stops)
            // Calls whose stop event comes after one of their incoming events in this batch; a stop event with
            // nothing of its call before it is remembered when it is admitted, as always.
            var endedAhead: Set<CallKey> = []
            for (index, pending) in admissible.enumerated() {
                let key = pending.callKey
                if pending.event.type.stopsRinging {
                    lastStop[key] = index
                    if ringing.contains(key) { endedAhead.insert(key) }
                } else {
                    ringing.insert(key)
                }
            }
            tracker.markEnded(endedAhead)
        }
        // A part of the batch at a time (the first pushes go out while the rest waits): the read-ahead decides about
        // it under one lock, then the call tracker admits, in order, what it let through (and what it let go), under
        // one lock, and its pushes go out together.
        let outbox = Outbox()
        var admitted: [Pending] = []
        for start in stride(from: 0, to: admissible.count, by: Self.outboxChunk) {
            let part = admissible[start..<min(start + Self.outboxChunk, admissible.count)]
            if stops > 0 {
                for (index, pending) in zip(part.indices, part) where pending.isIncoming {
                    if let stop = lastStop[pending.callKey], stop > index { pending.markLookedAhead() }
                }
            }
            admitted.removeAll(keepingCapacity: true)
            for (pending, verdict) in zip(part, gate.offer(part)) {
                admitted += released(by: verdict)
                if verdict.passes { admitted.append(pending) }
                if let epoch = verdict.timerEpoch { scheduleExpiry(lane: pending.record.partition, epoch: epoch) }
                if let scan = verdict.scan { self.scan(scan) }
            }
            let admissions = tracker.admit(admitted)
            for (pending, admission) in zip(admitted, admissions) {
                act(on: admission, pending, outbox: outbox)
                if outbox.pending.count >= Self.outboxChunk { flush(outbox) }
            }
            flush(outbox)
        }
    }

    /// Who hears that an event's outcome is final: no closure is made per event for the usual ones.
    enum Finisher: Sendable {
        /// A tracked event that was not sent (expired, cancelled): it leaves.
        case left(Pending)
        /// The answer of a tracked event's push: it leaves, and its call's next event goes.
        case answered(Pending)
        /// An event dead-lettered before it was tracked (``settle(_:_:ticket:handedOver:)``).
        case untracked(@Sendable (Outcome) -> Void)

        func callAsFunction(_ outcome: Outcome) {
            switch self {
            case .left(let pending): pending.done(outcome)
            case .answered(let pending): pending.answerFinished(outcome)
            case .untracked(let done): done(outcome)
            }
        }
    }

    /// Pushes admitted while handling one consumed batch, sent together by ``flush(_:)``.
    final class Outbox {
        /// Used by the one thread handling the batch, never while another access to it is under way: without the
        /// runtime's exclusivity check.
        @exclusivity(unchecked) var pending: [Pending] = []
    }

    /// At most this many pushes wait in an ``Outbox``, and a batch passes the read-ahead and the call tracker in parts
    /// of this size: a large batch goes out in parts. 16 rather than 64: the event loop gets work sooner and in
    /// smaller bites, which shortened the worker's p99 at no CPU cost (docs/performance.md, "Latency").
    private static let outboxChunk = 16

    /// Sends what `outbox` holds, in one call.
    private func flush(_ outbox: Outbox) {
        guard !outbox.pending.isEmpty else { return }
        defer { outbox.pending.removeAll(keepingCapacity: true) }
        let now = monotonic.uptimeMicroseconds()
        for pending in outbox.pending { observeDispatch(pending, now: now) }
        sender.send(outbox.pending)
    }

    /// Decodes and maps a consumed record; dead-letters it (and returns nil) when it cannot be sent.
    /// `handedOver`: monotonic µs; `now`: wall-clock ms.
    private func prepare(
        _ record: KafkaMessage, isCallsTopic: Bool, settlement: any RecordSettlement,
        homeSettlement: (any HomeThreadSettlement)?, ticket: UInt64, handedOver: Int64, now: Int64, mapper: PushMapper
    ) -> Pending? {
        var record = record
        if !record.headers.isEmpty, isCallsTopic { ignoreManagedHeaders(&record) }
        var event: CallEvent
        do {
            event = try decoder.decode(record.value)
        } catch {
            logger.debug("event dead-lettered: undecodable", metadata: Self.coordinates(record, ["reason": error.code.rawValue]))
            finish(router.route(record: record, event: nil, rejected: error.code.rawValue, detail: error.message),
                   of: record, done: .untracked(settle(record, settlement, ticket: ticket, handedOver: handedOver)))
            return nil
        }
        if !Self.isKeyed(record, by: event) { noteKeyMismatch(record, callID: event.callID) }
        let skew = CreationTimeBound.apply(to: &event, headers: record.headers, now: now)
        if skew > CreationTimeBound.reportedSkewMilliseconds { noteCreatedAhead(record, event: event, skew: skew) }
        let request: APNsRequest
        do {
            request = try mapper.map(event)
        } catch {
            logger.debug("event dead-lettered: unmappable", metadata: Self.coordinates(record, ["reason": error.code.rawValue]))
            finish(router.route(record: record, event: event, rejected: error.code.rawValue, detail: error.message),
                   of: record, done: .untracked(settle(record, settlement, ticket: ticket, handedOver: handedOver)))
            return nil
        }
        let skipped = mapper.skippedCustomKeys(of: event).count
        if skipped > 0 { metrics.skippedCustomKeys.increment(by: skipped) }
        let origin = isCallsTopic || event.type != .incoming
            ? nil : historyOrigin(of: record, ringDeadline: event.ringDeadlineMilliseconds, now: now)
        // Moved, not copied: a copy of the record and of the event is a retain per string and array inside.
        return Pending(record: consume record, isCallsTopic: isCallsTopic, origin: origin, event: consume event,
                       request: request, settlement: settlement, homeSettlement: homeSettlement, ticket: ticket,
                       handedOverMicroseconds: handedOver, dispatcher: self)
    }

    /// Drops the headers only callpush writes (``HeaderCodec/managed``: attempt, deadline, original coordinates, …)
    /// from a record of a topic callpush does not write: an upstream setting them could skip retry tiers, force a
    /// dead letter or an expiry, or start a scan of the partition's whole history. Counted, sent as if absent.
    private func ignoreManagedHeaders(_ record: inout KafkaMessage) {
        guard record.headers.contains(where: { HeaderCodec.managed.contains($0.name) }) else { return }
        record.headers.removeAll { HeaderCodec.managed.contains($0.name) }
        metrics.ignoredHeaders.increment()
    }

    /// Whether the record's Kafka key is the event's call id, as the event contract requires: the key decides the
    /// partition, so the call's events (its hang-up after its incoming call) reach one worker in order.
    /// (Over the record's bytes in place: no `String` is made for the call id.)
    private static func isKeyed(_ record: KafkaMessage, by event: CallEvent) -> Bool {
        guard let key = record.key else { return false }
        return event.spans.callID.equals(key, in: event.text)
    }

    /// Counts an event keyed by something else than its call id (it is still sent) and logs the 1st, 2nd, 4th, 8th, …
    /// of them: a producer that keys by user or at random sends a call's hang-up to another partition than its
    /// incoming call, where nothing stops the ring.
    private func noteKeyMismatch(_ record: KafkaMessage, callID: String) {
        metrics.keyMismatches.increment()
        guard let count = keyMismatches.next() else { return }
        logger.warning("event not keyed by its call id", metadata: Self.coordinates(record, [
            // Masked as a device token is (an upstream keying by token would put whole tokens in the log).
            "kafka.key": record.key.map(Self.maskedKey) ?? "(none)", "kafka.key_bytes": String(record.key?.count ?? 0),
            "event.call_id": callID, "worker.key_mismatches": String(count),
        ]))
    }

    /// The first and last 4 bytes of a key (as UTF-8, invalid bytes replaced), all of it when 12 bytes or fewer.
    private static func maskedKey(_ key: [UInt8]) -> String {
        guard key.count > 12 else { return String(decoding: key, as: UTF8.self) }
        return String(decoding: key.prefix(4), as: UTF8.self) + "…" + String(decoding: key.suffix(4), as: UTF8.self)
    }

    /// Counts an event whose `created_at` was more than a second ahead of this worker's clock (its ring counts from
    /// now, ``CreationTimeBound``) and logs the 1st, 2nd, 4th, … of them: the producer's clock (or this host's) is off.
    private func noteCreatedAhead(_ record: KafkaMessage, event: CallEvent, skew: Int64) {
        metrics.createdAhead.increment()
        guard let count = createdAhead.next() else { return }
        logger.warning("event created ahead of the worker's clock", metadata: Self.coordinates(record, [
            "event.call_id": event.callID, "event.ahead_ms": String(skew), "worker.events_created_ahead": String(count),
        ]))
    }

    /// The `done` of a record that never became a ``Pending`` (dead-lettered before sending): its ticket leaves the
    /// ledger's start times now (on the consumer's thread), the event stays in flight until its outcome.
    private func settle(_ record: KafkaMessage, _ settlement: any RecordSettlement, ticket: UInt64, handedOver: Int64)
        -> @Sendable (Outcome) -> Void
    {
        ledger.forget(ticket)
        return { [self] outcome in
            observeProcessing(since: handedOver)
            metrics.inFlight.set(ledger.endUntracked())
            settlement.done(record, outcome)
        }
    }

    /// `pending` leaves: `finished` when it reached its outcome (its processing time is observed), else given back.
    /// The ledger keeps it until the consumer's thread frees it.
    func leave(_ pending: Pending, finished: Bool) {
        guard let (live, first) = ledger.end(pending) else { return }
        if finished { observeProcessing(since: pending.handedOverMicroseconds) }
        metrics.inFlight.set(live)
        if first, pending.awaitsHomeSettlement { pending.homeSettlement?.completionsWaiting() }
    }

    private func observeProcessing(since handedOver: Int64) {
        metrics.processing.observe(Double(max(0, monotonic.uptimeMicroseconds() - handedOver)) / 1_000_000)
    }

    /// The calls-topic offset a retry-tier incoming call was first read from (its `x-original-*` headers), when that
    /// was the calls topic's partition of the same number and the call may still ring; nil otherwise. (A retry past its
    /// ring deadline, one that waited out a long outage, is dropped as `expired` anyway: it must not have the partition
    /// scanned back to where it began.)
    /// `now`: wall-clock ms.
    private func historyOrigin(of record: KafkaMessage, ringDeadline: Int64, now: Int64) -> Int64? {
        guard ringDeadline > now,
            HeaderCodec.integer(HeaderCodec.originalPartition, in: record.headers) == Int64(record.partition),
            let topic = record.headers.last(named: HeaderCodec.originalTopic),
            topic.value.elementsEqual(configuration.callsTopic.utf8)
        else { return nil }
        return HeaderCodec.integer(HeaderCodec.originalOffset, in: record.headers)
    }

    func admit(_ pending: Pending) {
        act(on: tracker.admit(pending), pending, outbox: nil)
    }

    /// Acts on the tracker's admission of `pending`: the waiting events it cancelled end, then its decision.
    private func act(on admission: CallTracker<Pending>.Admission, _ pending: Pending, outbox: Outbox?) {
        for waiting in admission.cancelledWaiting {
            drop(waiting, .cancelled, reason: CancelReason.queued)
        }
        act(on: admission.decision, pending, outbox: outbox)
    }

    /// Acts on the tracker's decision; a push to send goes into `outbox` when there is one, else out at once.
    func act(on decision: CallTracker<Pending>.Decision, _ pending: Pending, outbox: Outbox? = nil) {
        switch decision {
        case .sendNow:
            if let outbox { outbox.pending.append(pending) } else { send(pending) }
        case .queued:
            break
        case .expired:
            drop(pending, .expired)
        case .cancelled:
            let reason = pending.lookedAhead ? CancelReason.lookAhead : CancelReason.afterStop
            drop(pending, .cancelled, reason: reason)
        }
    }

    private func send(_ pending: Pending) {
        observeDispatch(pending, now: monotonic.uptimeMicroseconds())
        sender.send([pending])
    }

    /// `pending` goes to the APNs client now: its dispatch stage is over.
    private func observeDispatch(_ pending: Pending, now: Int64) {
        metrics.dispatchStage.observe(Double(max(0, now - pending.handedOverMicroseconds)) / 1_000_000)
    }

    /// APNs (or the transport) answered `pending`: route it, and once its outcome is final let its call's next event go.
    func answered(_ pending: Pending, _ result: consuming APNsResult) {
        entries.note(.answer)
        let now = clock.now().milliseconds
        let latency = max(0, now - pending.event.createdAtMilliseconds)
        if result.status != nil { metrics.endToEndLatency.observe(Double(latency) / 1000) }
        // Only a retry of an incoming call asks whether the call ended (the router's one use of it).
        let callEnded = result.disposition == .retryLater && pending.event.type == .incoming
            && tracker.hasEnded(pending.callKey)
        let decision = router.route(
            record: pending.record, event: pending.event, answer: result, topic: pending.request.topic, now: now,
            callEnded: callEnded, latencyMilliseconds: latency)
        finish(decision, of: pending.record, done: .answered(pending))
    }

    /// `pending` leaves unsent (`expired` or `cancelled`, `reason` why).
    private func drop(_ pending: Pending, _ outcome: Outcome, reason: String? = nil) {
        finish(router.route(record: pending.record, event: pending.event, dropped: outcome, reason: reason),
               of: pending.record, done: .left(pending))
    }

    static func coordinates(_ record: KafkaMessage, _ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata = extra
        metadata["kafka.topic"] = record.topic
        metadata["kafka.partition"] = String(record.partition)
        metadata["kafka.offset"] = String(record.offset)
        return metadata
    }
}
