internal import CRdKafka
import Foundation
import Synchronization
package import Telemetry

/// An idempotent producer (`enable.idempotence=true`, `acks=all`) with a delivery report per record.
///
/// ``produce(_:completion:)`` enqueues without blocking; the completion runs on the producer's own thread, which
/// polls delivery-report events. ``send(_:)`` is the async form and backs off while the local queue is full.
/// One producer per process is enough for every output topic.
package final class KafkaProducer: Sendable {
    package typealias Completion = @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void

    let configuration: KafkaProducerConfiguration
    let logger: Logger
    let handle: RDKafkaHandle
    private let mainQueue: RDKafkaQueue
    private let state = Mutex(State())
    /// Records produced whose delivery report has not run yet (a record's report has run once its handler or completion
    /// returned). Counted before ``accepting`` is read, while ``close(timeout:)`` clears ``accepting`` before the
    /// producer thread reads the count, both sequentially consistent: a record is either refused, or waited for.
    private let outstanding = Atomic<Int>(0)
    /// False from ``close(timeout:)`` on (``State/phase`` is no longer `running`).
    private let accepting = Atomic<Bool>(true)
    /// ``State/fatal`` holds the error that made the producer unusable.
    private let failed = Atomic<Bool>(false)
    /// A `flush` waits: the report that brings ``outstanding`` to 0 resumes it (set before the waiter reads the count,
    /// read after the count is lowered, both sequentially consistent).
    private let flushWaiting = Atomic<Bool>(false)
    /// The id of the next record (from 1).
    private let nextID = Atomic<UInt>(1)
    private let metrics: MetricsRegistry
    private let queueFullCounter: Counter

    private struct State: Sendable {
        var phase: Phase = .running
        var closeDeadline: ContinuousClock.Instant?
        var closeWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// `flush` calls waiting for ``KafkaProducer/outstanding`` to reach 0.
        var flushWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiterID = 0
        /// Local topic state kept by ``prepare(topics:requiring:timeout:)``, destroyed before the handle.
        var topics: [String: RDKafkaTopic] = [:]
        /// Metadata requests running on callers' threads: the producer thread destroys the handle only when none is.
        var metadataRequests = 0

        var fatal: KafkaError?
    }

    /// Where a record's delivery report goes.
    private enum PendingRecord: Sendable {
        case completion(Completion)
        case handler(any KafkaDeliveryHandler, tag: Int)

        func report(_ result: Result<KafkaDeliveryReport, KafkaError>) {
            switch self {
            case .completion(let completion): completion(result)
            case .handler(let handler, let tag): handler.delivered(result, tag: tag)
            }
        }
    }

    /// Where each produced record's report goes, by its id (the record's opaque, ``slotOpaque(_:ring:)``): producing
    /// takes no lock and makes no object. Sized for the records a worker has outstanding (about one receipt per event
    /// in flight); a record whose slot is still taken goes to ``spareSlots``.
    private let slots: KafkaDeliverySlots<PendingRecord>
    /// Slots for the records whose slot in ``slots`` is still taken, by id: as many as librdkafka holds
    /// (`queue.buffering.max.messages`, at most 2^20), made when the first record needs one — a burst produced
    /// faster than it is reported, or a record outstanding while 16 384 later ones are reported. Untouched memory
    /// until then: a worker that never keeps that many outstanding never makes it. A record whose slot is taken here
    /// too gets a ``DeliveryTarget``.
    /// (Retained by the producer once made; an atomic of its own, not `AtomicLazyReference`, whose `load` ran as
    /// unspecialised generic code: about 600 instructions per record.)
    private let spareSlots = Atomic<Unmanaged<KafkaDeliverySlots<PendingRecord>>?>(nil)
    private let spareSlotCount: Int

    /// A produced record's id and where its report goes, from ``produce(_:reportTo:)`` to its report, for a record that
    /// found both its slots taken: librdkafka keeps it as the record's opaque (one retain).
    private final class DeliveryTarget: Sendable {
        let id: UInt
        let pending: PendingRecord

        init(id: UInt, pending: PendingRecord) {
            self.id = id
            self.pending = pending
        }
    }

    private enum Phase: Sendable {
        case running
        case closing
        case finished
    }

    /// - Parameters:
    ///   - configuration: settings; see ``KafkaProducerConfiguration``.
    ///   - logger: librdkafka logs and errors go here (at info level and below).
    ///   - metrics: registry for `callpush_kafka_produce_queue_full_total`. Default: a private registry.
    /// - Throws: ``KafkaError`` for invalid configuration.
    package convenience init(
        configuration: KafkaProducerConfiguration,
        logger: Logger,
        metrics: MetricsRegistry = MetricsRegistry()
    ) throws(KafkaError) {
        try self.init(configuration: configuration, logger: logger, metrics: metrics, reportSlots: 16_384,
                      spareReportSlots: min(max(configuration.queueBufferingMaxMessages, 1), 1 << 20))
    }

    /// The producer with `reportSlots` slots for its records' report targets and `spareReportSlots` more once a
    /// record finds its slot taken (each rounded up to a power of two): small ones let a test reach every path.
    package init(
        configuration: KafkaProducerConfiguration, logger: Logger, metrics: MetricsRegistry, reportSlots: Int,
        spareReportSlots: Int
    ) throws(KafkaError) {
        self.configuration = configuration
        slots = KafkaDeliverySlots(capacity: reportSlots)
        spareSlotCount = spareReportSlots
        var logger = logger
        logger[metadataKey: KafkaLoggingKeys.clientID] = configuration.clientID
        self.logger = logger
        self.metrics = metrics
        queueFullCounter = metrics.counter(
            "callpush_kafka_produce_queue_full_total",
            help: "Produce attempts refused because librdkafka's local queue was full."
        )
        let config = try RDKafkaConfig(configuration.dictionary)
        config.enableEvents(
            CRdKafka_EVENT_DR() | CRdKafka_EVENT_LOG() | CRdKafka_EVENT_ERROR() | CRdKafka_EVENT_STATS()
        )
        handle = try RDKafkaHandle(kind: .producer, config: config)
        guard let main = rd_kafka_queue_get_main(handle.pointer) else {
            throw KafkaError(code: .creation, reason: "could not get the producer's main queue")
        }
        mainQueue = RDKafkaQueue(main)
        rd_kafka_set_log_queue(handle.pointer, main)
        let thread = Thread { [self] in self.runPollLoop() }
        thread.start()
    }

    deinit {
        spareSlots.load(ordering: .acquiring)?.release()
    }

    // MARK: - Producing

    /// Enqueues a record without blocking. `completion` runs once, on the producer thread, with the delivery
    /// report or the error (e.g. `messageTimedOut` after `messageTimeout`, or `purgeQueue` on close).
    ///
    /// - Returns: the record's id, also found in its ``KafkaDeliveryReport``.
    /// - Throws: ``KafkaError`` when the record could not be enqueued, e.g. `.queueFull` (retriable: back off and
    ///   try again) or `.closed`; `completion` is then not called.
    @discardableResult
    package func produce(_ record: KafkaProducerRecord, completion: @escaping Completion) throws(KafkaError) -> UInt {
        try produce(record, reportTo: .completion(completion))
    }

    /// ``produce(_:completion:)`` for a caller that keeps an object for the record: its delivery report goes to
    /// `handler` with `tag`. Throws as that does; `handler` is then not called.
    @discardableResult
    package func produce(_ record: KafkaProducerRecord, handler: any KafkaDeliveryHandler, tag: Int) throws(KafkaError)
        -> UInt
    {
        try produce(record, reportTo: .handler(handler, tag: tag))
    }

    private func produce(_ record: KafkaProducerRecord, reportTo pending: PendingRecord) throws(KafkaError) -> UInt {
        outstanding.add(1, ordering: .sequentiallyConsistent)
        guard accepting.load(ordering: .sequentiallyConsistent) else {
            reported(1)
            throw KafkaError.closed()
        }
        if failed.load(ordering: .acquiring), let fatal = state.withLock({ $0.fatal }) {
            reported(1)
            throw fatal
        }
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let opaque = keepTarget(id, pending)
        if let error = enqueue(record, opaque: opaque) {
            _ = takeTarget(opaque)
            reported(1)
            if error.code == .queueFull { queueFullCounter.increment() }
            throw error
        }
        return id
    }

    /// `count` records are reported (or refused): they are no longer outstanding, and a flush waiting for the last
    /// one returns.
    private func reported(_ count: Int) {
        guard outstanding.subtract(count, ordering: .sequentiallyConsistent).newValue == 0,
            flushWaiting.load(ordering: .sequentiallyConsistent)
        else { return }
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            // Read again under the lock: a record produced meanwhile keeps the flush waiting.
            guard outstanding.load(ordering: .sequentiallyConsistent) == 0 else { return [] }
            flushWaiting.store(false, ordering: .sequentiallyConsistent)
            defer { state.flushWaiters.removeAll() }
            return Array(state.flushWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Produces a record and waits for its delivery report. While librdkafka's local queue is full it backs off
    /// (without blocking a thread) for up to `queueFullTimeout`.
    func send(_ record: KafkaProducerRecord) async throws(KafkaError) -> KafkaDeliveryReport {
        let deadline = ContinuousClock.now + configuration.queueFullTimeout
        var backoff = Duration.milliseconds(1)
        while true {
            let result = await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<KafkaDeliveryReport, KafkaError>, Never>) in
                do throws(KafkaError) {
                    try produce(record) { continuation.resume(returning: $0) }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            switch result {
            case .success(let report):
                return report
            case .failure(let error) where error.code == KafkaError.Code.queueFull && ContinuousClock.now < deadline:
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .milliseconds(50))
            case .failure(let error):
                throw error
            }
        }
    }

    /// Hands the record to `rd_kafka_produceva` (librdkafka copies it). Everything it points to stays valid for
    /// the call: the topic's own UTF-8, the key, value and header bytes, and the argument list on the stack.
    private func enqueue(_ record: KafkaProducerRecord, opaque: UnsafeMutableRawPointer) -> KafkaError? {
        if record.headers.isEmpty { return enqueue(record, opaque: opaque, headers: []) }
        var headerNames: [UnsafeMutablePointer<CChar>] = []
        defer { headerNames.forEach { free($0) } }
        for header in record.headers {
            guard let name = strdup(header.name) else { return KafkaError(code: .fail, reason: "out of memory") }
            headerNames.append(name)
        }
        return withHeaderBuffers(record.headers) { buffers in
            enqueue(record, opaque: opaque, headers: zip(headerNames, buffers).map { (UnsafePointer($0), $1) })
        }
    }

    /// `enqueue` with the header names and values already as C memory (valid for the call).
    private func enqueue(
        _ record: KafkaProducerRecord, opaque: UnsafeMutableRawPointer,
        headers: [(name: UnsafePointer<CChar>, value: UnsafeRawBufferPointer)]
    ) -> KafkaError? {
        record.topic.withCString { topic in
            record.value.withUnsafeBytes { value in
                withBytes(of: record.key) { key in
                    withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 6 + headers.count) { arguments in
                        var count = 0
                        arguments[count] = rd_kafka_vu_t(vtype: RD_KAFKA_VTYPE_TOPIC, u: .init(cstr: topic))
                        count += 1
                        if let partition = record.partition {
                            arguments[count] = rd_kafka_vu_t(vtype: RD_KAFKA_VTYPE_PARTITION, u: .init(i32: partition))
                            count += 1
                        }
                        arguments[count] = rd_kafka_vu_t(vtype: RD_KAFKA_VTYPE_MSGFLAGS, u: .init(i: CRdKafka_MSG_F_COPY()))
                        count += 1
                        arguments[count] = rd_kafka_vu_t(vtype: RD_KAFKA_VTYPE_OPAQUE, u: .init(ptr: opaque))
                        count += 1
                        if let key {
                            // An empty key is a non-null pointer of size 0 (a null pointer would mean "no key").
                            let start = UnsafeMutableRawPointer(mutating: key.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!)
                            arguments[count] = rd_kafka_vu_t(vtype: RD_KAFKA_VTYPE_KEY, u: .init(mem: .init(ptr: start, size: key.count)))
                            count += 1
                        }
                        arguments[count] = rd_kafka_vu_t(
                            vtype: RD_KAFKA_VTYPE_VALUE,
                            u: .init(mem: .init(ptr: UnsafeMutableRawPointer(mutating: value.baseAddress), size: value.count)))
                        count += 1
                        for header in headers {
                            let bytes = header.value.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
                            arguments[count] = rd_kafka_vu_t(
                                vtype: RD_KAFKA_VTYPE_HEADER,
                                u: .init(header: .init(name: header.name, val: bytes, size: header.value.count)))
                            count += 1
                        }
                        return rd_kafka_produceva(handle.pointer, arguments.baseAddress, count).map { KafkaError.consuming($0) }
                    }
                }
            }
        }
    }

    // MARK: - Metadata

    /// The partition count of each of `topics`, from one metadata request to the cluster.
    /// - Throws: ``KafkaError`` when the request fails or times out, (code `unknownTopicOrPartition`) when a topic
    ///   does not exist, or `.closed` once the producer is closing.
    package func partitionCounts(of topics: [String], timeout: Duration = .seconds(10)) throws(KafkaError) -> [String: Int] {
        let counts = try clusterPartitionCounts(of: topics, timeout: timeout)
        try Self.requireExisting(topics, in: counts)
        return counts
    }

    /// Looks `topics` up on the cluster (one metadata request) and keeps librdkafka's local state of each for the
    /// producer's lifetime, so that the first records to them go out at once.
    ///
    /// Without it a topic's local state is made by its first record, and librdkafka 2.0.2 asks the cluster about
    /// a topic only when a broker connection comes up or at its topic scan once a second: records to a topic first
    /// produced after the connection is up wait up to a second for their partitions' leaders (200 000 records
    /// acknowledged after 1.2 s instead of 0.3 s in 2 of about 45 runs of a C reproduction; the bench saw it too).
    ///
    /// - Parameter required: topics (among `topics`) the cluster must have.
    /// - Returns: the partition count of each of `topics` the cluster has. Topics it lacks are kept as well (a
    ///   cluster that creates topics on demand creates them at the first record).
    /// - Throws: ``KafkaError`` when the request fails or times out, `unknownTopicOrPartition` when a `required`
    ///   topic is missing (as ``partitionCounts(of:timeout:)``), or `.closed` once the producer is closing.
    @discardableResult
    package func prepare(
        topics: [String], requiring required: [String] = [], timeout: Duration = .seconds(10)
    ) throws(KafkaError) -> [String: Int] {
        // The answer fills librdkafka's metadata cache, from which each topic's local state is made known at once.
        let counts = try clusterPartitionCounts(of: topics, timeout: timeout)
        try Self.requireExisting(required, in: counts)
        try state.withLock { state throws(KafkaError) in
            guard state.phase == .running else { throw KafkaError.closed() }
            for name in topics where state.topics[name] == nil {
                state.topics[name] = RDKafkaTopic(handle: handle, name: name)
            }
        }
        return counts
    }

    private static func requireExisting(_ topics: [String], in counts: [String: Int]) throws(KafkaError) {
        let missing = topics.filter { counts[$0] == nil }
        guard missing.isEmpty else {
            throw KafkaError(code: .unknownTopicOrPartition, reason: "topic \(missing.joined(separator: ", ")) does not exist")
        }
    }

    /// The partition count of each of `topics` the cluster has, from one metadata request for all its topics.
    private func clusterPartitionCounts(of topics: [String], timeout: Duration) throws(KafkaError) -> [String: Int] {
        try state.withLock { state throws(KafkaError) in
            guard state.phase == .running else { throw KafkaError.closed() }
            state.metadataRequests += 1
        }
        defer { state.withLock { $0.metadataRequests -= 1 } }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let err = rd_kafka_metadata(handle.pointer, 1, nil, &metadata, timeout.kafkaTimeoutMilliseconds)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError.rdKafka(err, reason: "metadata request failed: \(String(cString: rd_kafka_err2str(err)))")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        var counts: [String: Int] = [:]
        let listed = UnsafeBufferPointer(start: metadata.pointee.topics, count: Int(metadata.pointee.topic_cnt))
        for topic in listed where topic.err == RD_KAFKA_RESP_ERR_NO_ERROR {
            let name = String(cString: topic.topic)
            if topics.contains(name) { counts[name] = Int(topic.partition_cnt) }
        }
        return counts
    }

    // MARK: - Flush and close

    /// Waits until every produced record has its delivery report (and its completion has run), or `timeout` passes.
    /// The producer thread resumes it as soon as the last completion has returned.
    ///
    /// - Returns: `true` when nothing is outstanding.
    package func flush(timeout: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let waiterID = state.withLock { state -> Int? in
                // The flag before the count (``reported(_:)`` lowers the count, then reads the flag).
                flushWaiting.store(true, ordering: .sequentiallyConsistent)
                if outstanding.load(ordering: .sequentiallyConsistent) == 0 {
                    if state.flushWaiters.isEmpty { flushWaiting.store(false, ordering: .sequentiallyConsistent) }
                    return nil
                }
                let id = state.nextWaiterID
                state.nextWaiterID += 1
                state.flushWaiters[id] = continuation
                return id
            }
            guard let waiterID else { return continuation.resume(returning: true) }
            // On a Dispatch timer, not a sleeping task: the timeout must fire when it is due even while every thread
            // of Swift's cooperative pool is busy. Weak: a flush that is over must not keep the producer alive.
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.inSeconds) { [weak self] in
                guard let waiter = self?.state.withLock({ $0.flushWaiters.removeValue(forKey: waiterID) }) else { return }
                waiter.resume(returning: false)
            }
        }
    }

    /// The fatal error that made this producer unusable, if any (then flush, close and restart the process);
    /// ``produce(_:completion:)`` throws it too.
    var fatalError: KafkaError? { state.withLock { $0.fatal } }


    /// Records enqueued and still waiting for their delivery report.
    var outstandingCount: Int { outstanding.load(ordering: .relaxed) }

    /// Stops accepting records, waits up to `timeout` for outstanding delivery reports, fails the rest with
    /// `purgeQueue`/`purgeInflight`, and destroys the handle. Idempotent. (Records librdkafka has still not reported a
    /// second after that purge are dropped unreported and logged: the purge reports every record it finds at once.)
    package func close(timeout: Duration = .seconds(10)) async {
        // Bounded: if librdkafka never lets the producer thread finish, return anyway (the thread is leaked).
        let bound = timeout + .seconds(15)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiterID = state.withLock { state -> Int? in
                if state.phase == .finished { return nil }
                if state.phase == .running {
                    state.phase = .closing
                    accepting.store(false, ordering: .sequentiallyConsistent)
                    state.closeDeadline = .now + timeout
                }
                let id = state.nextWaiterID
                state.nextWaiterID += 1
                state.closeWaiters[id] = continuation
                return id
            }
            guard let waiterID else { return continuation.resume() }
            // Weak, on a Dispatch timer (as `flush`'s): a close that finished must not keep the producer — its
            // buffers, metrics and registry — alive for the rest of the bound. While its thread runs, the thread
            // keeps it.
            DispatchQueue.global().asyncAfter(deadline: .now() + bound.inSeconds) { [weak self] in
                guard let self, let waiter = state.withLock({ $0.closeWaiters.removeValue(forKey: waiterID) }) else { return }
                logger.info("producer close did not finish in time; returning without it")
                waiter.resume()
            }
        }
    }

    // MARK: - Producer thread

    private func runPollLoop() {
        ThreadName.setCurrent("kafka-produce")
        let timeout = configuration.pollTimeout.kafkaTimeoutMilliseconds
        var purged = false
        var purgeDeadline = ContinuousClock.now
        while true {
            let (phase, deadline, requests) = state.withLock { ($0.phase, $0.closeDeadline, $0.metadataRequests) }
            if phase == .closing {
                if outstanding.load(ordering: .sequentiallyConsistent) == 0, requests == 0 { break }
                let now = ContinuousClock.now
                if let deadline, now >= deadline, !purged {
                    rd_kafka_purge(handle.pointer, CRdKafka_PURGE_F_QUEUE() | CRdKafka_PURGE_F_INFLIGHT())
                    purged = true
                    purgeDeadline = now + .seconds(1)
                }
                if purged, now >= purgeDeadline, requests == 0 { break }
            }
            drainEvents(timeout: phase == .closing ? min(timeout, 10) : timeout)
        }
        // A purge has every record reported at once (`purgeQueue`, `purgeInflight`); records librdkafka still held a
        // second after it are dropped unreported with the handle (their targets are not freed).
        let unreported = outstanding.load(ordering: .sequentiallyConsistent)
        if unreported > 0 {
            logger.error("producer closed with records librdkafka never reported", metadata: [
                "kafka.unreported_records": String(unreported),
            ])
        }
        state.withLock { state in
            mainQueue.destroy()
            for topic in state.topics.values { topic.destroy() }
            state.topics.removeAll()
        }
        handle.destroy()
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.phase = .finished
            defer { state.closeWaiters.removeAll() }
            return Array(state.closeWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    private func drainEvents(timeout: Int32) {
        guard let queue = mainQueue.pointer else { return }
        var wait = timeout
        var budget = 1000
        while budget > 0, let event = rd_kafka_queue_poll(queue, wait) {
            wait = 0
            budget -= 1
            if Int32(rd_kafka_event_type(event)) == CRdKafka_EVENT_DR() {
                deliver(event)
                rd_kafka_event_destroy(event)
                continue
            }
            let converted = RDKafkaEvent.converting(event)
            rd_kafka_event_destroy(event)
            switch converted {
            case .log(let level, let facility, let message):
                logger.librdkafka(level: level, facility: facility, message: message)
            case .error(let error):
                logger.info("kafka producer error", metadata: [KafkaLoggingKeys.error: error.description])
                if error.isFatal {
                    let fatal = handle.fatalError() ?? error
                    state.withLock { $0.fatal = fatal }
                    failed.store(true, ordering: .releasing)
                }
            case .statistics, .offsetCommit, nil:
                break
            }
        }
    }

    /// Which ring of slots holds a record's report target: the low two bits of its opaque (a ``DeliveryTarget``'s
    /// address has neither set).
    private enum Ring: UInt {
        case first = 0b01
        case spare = 0b11
    }

    /// A record's opaque when its report waits in a slot of `ring`: the id shifted up, the ring in the low two bits.
    private static func slotOpaque(_ id: UInt, ring: Ring) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: id << 2 | ring.rawValue)!
    }

    /// ``spareSlots``, made by the first caller that needs them.
    private var spare: KafkaDeliverySlots<PendingRecord> {
        if let made = spareSlots.load(ordering: .acquiring) { return made.takeUnretainedValue() }
        let made = Unmanaged.passRetained(KafkaDeliverySlots<PendingRecord>(capacity: spareSlotCount))
        let (stored, existing) = spareSlots.compareExchange(expected: nil, desired: made, ordering: .acquiringAndReleasing)
        guard !stored, let existing else { return made.takeUnretainedValue() }
        made.release()
        return existing.takeUnretainedValue()
    }

    /// Keeps the record `id`'s report target, in its slot or (both its slots taken) an object of its own; returns the
    /// record's opaque, from which ``takeTarget(_:)`` takes it back.
    private func keepTarget(_ id: UInt, _ pending: PendingRecord) -> UnsafeMutableRawPointer {
        if slots.claim(id, for: pending) { return Self.slotOpaque(id, ring: .first) }
        if spare.claim(id, for: pending) { return Self.slotOpaque(id, ring: .spare) }
        return Unmanaged.passRetained(DeliveryTarget(id: id, pending: pending)).toOpaque()
    }

    /// The id and report target of the record whose opaque is `opaque` (``keepTarget(_:_:)``), taken from its slot or
    /// its object.
    private func takeTarget(_ opaque: UnsafeMutableRawPointer) -> (id: UInt, pending: PendingRecord) {
        let bits = UInt(bitPattern: opaque)
        switch Ring(rawValue: bits & 0b11) {
        case .first: return (bits >> 2, slots.take(bits >> 2))
        case .spare: return (bits >> 2, spare.take(bits >> 2))
        case nil:
            let target = Unmanaged<DeliveryTarget>.fromOpaque(opaque).takeRetainedValue()
            return (target.id, target.pending)
        }
    }

    /// Reports each record of one delivery-report event (librdkafka reports a produce request's records in one) to
    /// where it goes: its target comes back from the record's opaque, no lookup and no lock.
    private func deliver(_ event: OpaquePointer) {
        var count = 0
        // The event's records normally share one topic: its name is made once.
        var topic = ""
        while let message = rd_kafka_event_message_next(event) {
            guard let opaque = message.pointee._private else { continue }
            let target = takeTarget(opaque)
            count += 1
            guard message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                target.pending.report(.failure(KafkaError.rdKafka(message.pointee.err)))
                continue
            }
            topic = KafkaMessage.topicName(of: message, previous: topic)
            let offset = message.pointee.offset
            target.pending.report(.success(KafkaDeliveryReport(
                topic: topic, partition: message.pointee.partition, offset: offset >= 0 ? offset : nil, id: target.id)))
        }
        if count > 0 { reported(count) }
    }
}

/// Calls `body` with `bytes`' bytes, nil when there are none (the key read once: each read of a record's optional key
/// was a copy of its own).
private func withBytes<Result>(of bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> Result) -> Result {
    guard let bytes else { return body(nil) }
    return bytes.withUnsafeBytes { body($0) }
}

/// Calls `body` with the header values' bytes, all valid for the duration of the call.
private func withHeaderBuffers<Result>(
    _ headers: [KafkaHeader],
    _ body: ([UnsafeRawBufferPointer]) -> Result
) -> Result {
    func recurse(_ index: Int, _ collected: inout [UnsafeRawBufferPointer]) -> Result {
        if index == headers.count { return body(collected) }
        return headers[index].value.withUnsafeBytes { buffer in
            collected.append(buffer)
            return recurse(index + 1, &collected)
        }
    }
    var collected: [UnsafeRawBufferPointer] = []
    collected.reserveCapacity(headers.count)
    return recurse(0, &collected)
}
