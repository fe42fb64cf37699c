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
/// - Important: thread-safe. `handle` may be called from the consumer thread while answers arrive on I/O threads.
final class Dispatcher: Sendable {
    /// An admitted event waiting for, or holding, its call's turn, and then its push and its HTTP/2 stream (an
    /// ``APNsPush``): one object from admission to the offset store. A class: it passes through the read-ahead, the
    /// call tracker, the APNs pool and the connection, and copying the record, event and request at every step (a
    /// retain per string and array inside) would cost more than the rest of the hand-over.
    ///
    /// `@unchecked Sendable` restates its base class's (``APNsPush``: one owner at a time); its own fields are
    /// constants and atomics.
    final class Pending: APNsPush, InFlightLedgerItem, CallTrackerItem, ReadAheadItem, @unchecked Sendable {
        let record: KafkaMessage
        let event: CallEvent
        /// ``CallEvent/callKey``: the call in the ``CallTracker``.
        let callKey: CallKey
        /// Its record was read from the calls topic, not a retry tier.
        let isCallsTopic: Bool
        /// For a retry-tier incoming call, the calls-topic offset it was first read from
        /// (``Dispatcher/historyOrigin(of:ringDeadline:now:)``); nil for the rest. Read once, before the read-ahead's lock.
        let origin: Int64?
        /// How the record leaves: its outcome, or given back (shared by its batch).
        let settlement: any RecordSettlement
        /// `settlement` when it settles outcomes on the home thread (``releaseFinished()``).
        let homeSettlement: (any HomeThreadSettlement)?
        /// Its ``InFlightLedger`` ticket.
        let ticket: UInt64
        /// When the consumer handed it over (monotonic clock, µs): the start of its dispatch stage.
        let handedOverMicroseconds: Int64
        /// The dispatcher it belongs to: its completions need nothing else (one reference to capture).
        let dispatcher: Dispatcher
        private let lookedAheadFlag = Atomic<Bool>(false)
        private let nextEnded = Atomic<Unmanaged<Pending>?>(nil)
        private let endedFlag = Atomic<Bool>(false)
        /// Done, its outcome waiting for the home thread to settle it.
        private let doneFlag = Atomic<Bool>(false)

        init(
            record: KafkaMessage, isCallsTopic: Bool, origin: Int64?, event: CallEvent, request: APNsRequest,
            settlement: any RecordSettlement, homeSettlement: (any HomeThreadSettlement)?, ticket: UInt64,
            handedOverMicroseconds: Int64, dispatcher: Dispatcher
        ) {
            // The key before the event is stored: read after, the event would be copied into the object.
            self.callKey = event.callKey
            self.record = record
            self.isCallsTopic = isCallsTopic
            self.origin = origin
            self.event = event
            self.settlement = settlement
            self.homeSettlement = homeSettlement
            self.ticket = ticket
            self.handedOverMicroseconds = handedOverMicroseconds
            self.dispatcher = dispatcher
            super.init(request, environment: event.environment)
        }

        var eventType: CallEventType { event.type }
        var ringDeadlineMilliseconds: Int64 { event.ringDeadlineMilliseconds }
        var lane: Int32 { record.partition }
        var offset: Int64 { record.offset }
        var highWatermark: Int64? { record.highWatermarkAtAssignment }
        var isIncoming: Bool { event.type == .incoming }

        /// APNs (or the transport) answered it (on the connection's loop, or on the sending thread when the client
        /// refused it at once).
        override func answered(_ result: consuming APNsResult) { dispatcher.answered(self, result) }

        /// Held by the read-ahead, or its call's stop event came later in its batch: a cancellation is the
        /// look-ahead's doing.
        var lookedAhead: Bool { lookedAheadFlag.load(ordering: .relaxed) }

        func markLookedAhead() { lookedAheadFlag.store(true, ordering: .relaxed) }

        var ledgerNext: Unmanaged<Pending>? { nextEnded.load(ordering: .relaxed) }
        func setLedgerNext(_ next: Unmanaged<Pending>?) { nextEnded.store(next, ordering: .relaxed) }
        func markLedgerEnded() -> Bool { !endedFlag.exchange(true, ordering: .relaxed) }

        /// The event's outcome is final and counted: it leaves (its offset may be stored), and is freed on the
        /// consumer's thread, which made it — and settled there too when its settlement is a home-thread one.
        func done(_ outcome: Outcome) {
            if homeSettlement != nil {
                doneFlag.store(true, ordering: .relaxed)
            } else {
                settlement.done(record, outcome)
            }
            dispatcher.leave(self, finished: true)
        }

        /// Done, and its settlement waits for the home thread (ordered by the ledger's list).
        var awaitsHomeSettlement: Bool { doneFlag.load(ordering: .relaxed) }

        /// Leaves without an outcome: the record stays unfinished for the partition's next owner.
        func giveBack() {
            dispatcher.leave(self, finished: false)
            settlement.giveBack(record)
        }

        /// The answer of this event, the call's one in flight, is final: it leaves, and the call's next event goes.
        func answerFinished(_ outcome: Outcome) {
            done(outcome)
            for release in dispatcher.tracker.complete(callKey) {
                dispatcher.act(on: release.decision, release.item)
            }
        }
    }

    let configuration: DispatcherConfiguration
    private let decoder: CallEventDecoder
    /// Replaced by ``updateMapping(_:)`` (a configuration reload).
    private let mapper: Mutex<PushMapper>
    private let router: OutcomeRouter
    private let tracker: CallTracker<Pending>
    private let gate: ReadAheadGate<Pending>
    /// Reads newly assigned partitions' backlogs for stop events (nil: the read-ahead is bounded by its limits).
    private let scanner: (any BacklogScanner)?
    /// The events in flight, and the finished ones until the consumer's thread frees them (``releaseFinished()``).
    private let ledger = InFlightLedger<Pending>()
    private let sender: any PushSender
    private let producer: any RecordProducer
    /// Runs the delayed work: the read-ahead's timeout and the back-off of a failed produce (the sender's event loops).
    private let timers: any JobScheduler
    private let metrics: WorkerMetrics
    private let clock: any WallClock
    /// Stage timings and in-flight ages (spans inside the process); ``clock`` is for event times.
    private let monotonic: any MonotonicClock
    private let logger: Logger
    /// The retry tier topics, to tell a retry record among an outcome's records.
    /// (A few: a linear look costs less than hashing the topic of every event.)
    private let retryTopics: [String]
    private let stopped = Atomic<Bool>(false)
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
    private enum Finisher: Sendable {
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
    private final class Outbox {
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
    private func leave(_ pending: Pending, finished: Bool) {
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

    /// Scans a part of a calls partition the read-ahead asked for: each stop event in it marks its call ended in the
    /// tracker; once the scan is complete the read-ahead lets the events it held for it go, and they (and every later
    /// one) meet those marks. A backlog scan covers what the partition held at assignment, however long; a history
    /// scan what lies before it, for retry records whose hang-up the partition's previous owner may have sent.
    private func scan(_ scan: ReadAheadScan) {
        guard let scanner else { return }
        let started = ContinuousClock.now
        let tally = ScanTally()
        let topic = configuration.callsTopic
        scanner.scan(topic: topic, partition: scan.lane, from: scan.from, to: scan.to) { [weak self] value in
            guard let self else { return false }
            entries.note(.scanRecord)
            guard gate.isScanning(scan) else { return false }
            tally.records.add(1, ordering: .relaxed)
            if StopTypeProbe.mayStopRinging(value), let event = try? decoder.decode(value), event.type.stopsRinging {
                tracker.markEnded(event.callKey)
                tally.endedCalls.add(1, ordering: .relaxed)
            }
            return true
        } finished: { [weak self] outcome in
            guard let self else { return }
            entries.note(.scanEnd)
            let verdict = gate.scanFinished(scan, completed: outcome.result == .completed)
            let seconds = (ContinuousClock.now - started).inSeconds
            let records = tally.records.load(ordering: .relaxed), endedCalls = tally.endedCalls.load(ordering: .relaxed)
            metrics.readAheadScans[scan.kind]?[outcome.result]?.increment()
            metrics.readAheadScanDuration[scan.kind]?.observe(seconds)
            metrics.readAheadScanEndedCalls.increment(by: endedCalls)
            var metadata: Logger.Metadata = [
                "kafka.topic": topic, "kafka.partition": String(scan.lane),
                "kafka.offsets": "\(scan.from)..<\(scan.to.map(String.init) ?? "high watermark")",
                "read_ahead.scan": scan.kind.rawValue, "read_ahead.scanned": String(records),
                "read_ahead.ended_calls": String(endedCalls), "read_ahead.held": String(verdict.released.count),
                "read_ahead.ms": String(Int(seconds * 1000)),
            ]
            switch outcome.result {
            case .completed: logger.info("\(scan.kind.rawValue) scanned for hang-ups", metadata: metadata)
            case .stopped: logger.debug("\(scan.kind.rawValue) scan stopped: read through or revoked first", metadata: metadata)
            case .failed:
                metadata["error"] = outcome.failure ?? "unknown"
                logger.warning(scan.kind == .backlog
                    ? "backlog scan failed; the read-ahead is bounded by its limits"
                    : "history scan failed; its retry records go without it", metadata: metadata)
            }
            admitReleased(verdict)
            if let next = verdict.scan { self.scan(next) }
        }
    }

    /// What one scan read.
    private final class ScanTally: Sendable {
        let records = Atomic<Int>(0)
        let endedCalls = Atomic<Int>(0)
    }

    /// Admits what a verdict of the read-ahead released.
    private func admitReleased(_ verdict: ReadAheadGate<Pending>.Verdict) {
        for pending in released(by: verdict) { admit(pending) }
    }

    /// Admits events the read-ahead held.
    private func admitReleased(_ released: [Pending]) {
        for pending in released {
            pending.markLookedAhead()
            admit(pending)
        }
    }

    /// The events a verdict of the read-ahead let go, counted by reason when they go early, and marked: a cancellation
    /// of one of them is the look-ahead's doing.
    private func released(by verdict: ReadAheadGate<Pending>.Verdict) -> [Pending] {
        if let reason = verdict.releasedEarly { metrics.readAheadReleasedEarly[reason]?.increment(by: verdict.released.count) }
        for pending in verdict.released { pending.markLookedAhead() }
        return verdict.released
    }

    private func scheduleExpiry(lane: Int32, epoch: UInt64, after delay: Duration? = nil) {
        let wait = delay ?? gate.configuration.timeout
        // Weak: a worker shut down meanwhile has nothing left to release, and must not be kept alive until then.
        timers.execute(after: wait) { [weak self] in
            guard let self else { return }
            entries.note(.timer)
            switch gate.expire(lane: lane, epoch: epoch) {
            case .nothing: break
            case .later(let remaining): scheduleExpiry(lane: lane, epoch: epoch, after: remaining)
            case .released(let held):
                metrics.readAheadReleasedEarly[.timeout]?.increment(by: held.count)
                admitReleased(held)
            }
        }
    }

    /// The calls topic's partitions `lanes` were assigned to this worker: their backlog is read ahead.
    func assigned(lanes: [Int32]) {
        entries.note(.rebalance)
        giveBack(gate.assign(lanes: lanes))
    }

    /// `lanes` were revoked: events the read-ahead held are given back unprocessed, so the partition's next owner
    /// reads ahead through them itself (sending them now could ring a call whose hang-up this worker has not read).
    func revoked(lanes: [Int32]) {
        entries.note(.rebalance)
        giveBack(gate.revoke(lanes: lanes))
    }

    /// Gives back every event the read-ahead holds and stops reading ahead (the start of a graceful shutdown).
    func giveBackHeld() {
        giveBack(gate.releaseAll())
    }

    private func giveBack(_ held: [Pending]) {
        for pending in held { pending.giveBack() }
    }

    private func admit(_ pending: Pending) {
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
    private func act(on decision: CallTracker<Pending>.Decision, _ pending: Pending, outbox: Outbox? = nil) {
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
    private func answered(_ pending: Pending, _ result: consuming APNsResult) {
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

    /// Produces every record of `decision` (the routing of `record`), then counts the outcome and calls `done`.
    private func finish(_ decision: OutcomeRouter.Decision, of record: KafkaMessage, done: Finisher) {
        guard !decision.records.isEmpty else {
            metrics.record(outcome: decision.outcome, reason: decision.reason, retryTier: decision.retryTier)
            done(decision.outcome)
            return
        }
        let delivery = Delivery(
            source: record, decision: decision, startMicroseconds: monotonic.uptimeMicroseconds(), dispatcher: self, done: done)
        for index in decision.records.indices { produce(delivery, tag: Delivery.tag(index: index, attempt: 0)) }
    }

    /// One outcome waiting for the delivery reports of its records: the producer reports each to it, by the tag
    /// ``tag(index:attempt:)`` gave the record (no closure per record).
    private final class Delivery: KafkaDeliveryHandler {
        /// The consumed record whose outcome this is.
        let source: KafkaMessage
        let decision: OutcomeRouter.Decision
        /// When its records went to the producer (monotonic clock, µs): the start of its acknowledge stage.
        let startMicroseconds: Int64
        let dispatcher: Dispatcher
        let done: Finisher
        private let remaining: Atomic<Int>
        /// The first refusal among its records (``KafkaError/name``), if Kafka refused one for good.
        private let refusal = Mutex<String?>(nil)
        /// Whether ``refusal`` holds one: the usual outcome (none refused) is read without the lock.
        private let refused = Atomic<Bool>(false)

        init(
            source: KafkaMessage, decision: OutcomeRouter.Decision, startMicroseconds: Int64, dispatcher: Dispatcher,
            done: Finisher
        ) {
            self.source = source
            self.decision = decision
            self.startMicroseconds = startMicroseconds
            self.dispatcher = dispatcher
            self.done = done
            remaining = Atomic(decision.records.count)
        }

        /// The tag of the record at `index` of ``decision``'s records, produced for the `attempt`-th time (from 0).
        static func tag(index: Int, attempt: Int) -> Int { attempt << 8 | index }

        /// The record's index and attempt that ``tag(index:attempt:)`` made `tag` of.
        static func record(of tag: Int) -> (index: Int, attempt: Int) { (tag & 0xFF, tag >> 8) }

        func delivered(_ result: Result<KafkaDeliveryReport, KafkaError>, tag: Int) {
            let record = Self.record(of: tag)
            dispatcher.delivered(self, index: record.index, attempt: record.attempt, result)
        }

        /// Counts one acknowledged (or refused) record; true for the last one.
        func acknowledge() -> Bool { remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }

        /// Notes that Kafka refused one of its records for good: the event ends as ``Outcome/abandoned``.
        func refuse(_ code: String) {
            refusal.withLock { $0 = $0 ?? code }
            refused.store(true, ordering: .releasing)
        }

        /// The outcome once every record is acknowledged or refused (``acknowledge()`` ordered every refusal before),
        /// and its reason.
        var final: (outcome: Outcome, reason: String?) {
            guard refused.load(ordering: .acquiring) else { return (decision.outcome, decision.reason) }
            return refusal.withLock { $0 }.map { (.abandoned, $0) } ?? (decision.outcome, decision.reason)
        }
    }

    /// Produces one of `delivery`'s records (its `tag` says which, and which attempt).
    private func produce(_ delivery: Delivery, tag: Int) {
        producer.produce(delivery.decision.records[Delivery.record(of: tag).index], reportingTo: delivery, tag: tag)
    }

    /// The delivery report of `delivery`'s record `index`: acknowledged; refused for good (the event ends as
    /// ``Outcome/abandoned``); or failed, and produced again after a back-off that doubles with each `attempt`, until
    /// acknowledged, refused or stopped. The last acknowledgement counts the outcome and calls `done`.
    private func delivered(_ delivery: Delivery, index: Int, attempt: Int, _ result: Result<KafkaDeliveryReport, KafkaError>) {
        entries.note(.delivery)
        switch result {
        case .success:
            acknowledged(delivery)
        case .failure(let error) where error.refusesRecord:
            let record = delivery.decision.records[index]
            metrics.refusedRecords(topic: record.topic).increment()
            logger.error("record refused by Kafka; its event is abandoned", metadata: Self.coordinates(delivery.source, [
                "output.topic": record.topic, "output.bytes": String(record.value.count + record.headers.byteCount),
                "error": "\(error.name): \(error.reason)",
            ]))
            delivery.refuse(error.name)
            acknowledged(delivery)
        case .failure(let error):
            let topic = delivery.decision.records[index].topic
            metrics.produceFailures(topic: topic).increment()
            guard !stopped.load(ordering: .relaxed) else { return }
            logger.warning("produce failed; retrying", metadata: ["kafka.topic": topic, "error": "\(error)"])
            var delay = configuration.produceRetryInitial
            for _ in 0..<min(attempt, 32) { delay = min(delay * 2, configuration.produceRetryMaximum) }
            timers.execute(after: delay) { [self] in
                entries.note(.timer)
                produce(delivery, tag: Delivery.tag(index: index, attempt: attempt + 1))
            }
        }
    }

    /// One of `delivery`'s records is acknowledged or refused; after the last, its outcome is counted and final.
    private func acknowledged(_ delivery: Delivery) {
        guard delivery.acknowledge() else { return }
        metrics.acknowledgeStage.observe(Double(max(0, monotonic.uptimeMicroseconds() - delivery.startMicroseconds)) / 1_000_000)
        let final = delivery.final
        metrics.record(outcome: final.outcome, reason: final.reason, retryTier: delivery.decision.retryTier)
        delivery.done(final.outcome)
    }

    private static func coordinates(_ record: KafkaMessage, _ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata = extra
        metadata["kafka.topic"] = record.topic
        metadata["kafka.partition"] = String(record.partition)
        metadata["kafka.offset"] = String(record.offset)
        return metadata
    }
}
