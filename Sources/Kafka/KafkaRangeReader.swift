internal import CRdKafka
import Foundation
import Synchronization
package import Telemetry

/// Reads given offset ranges of partitions, outside any consumer group and beside it: a worker reads the backlog of
/// a partition it was just assigned ahead of its own consumer, which must not wait for it.
///
/// It uses librdkafka's simple consumer (`rd_kafka_consume_start_queue` / `rd_kafka_consume_stop`, one queue per
/// range), not `rd_kafka_assign`: no group id, no coordinator, and no assignment state machine. (A first version
/// assigned and unassigned partitions as ranges came and went, and librdkafka 2.0.2 aborted a worker in
/// `rd_kafka_assignment_partition_stopped` — an assignment changed again while a removal's stop was pending,
/// librdkafka #5573, fixed in 2.15.)
///
/// Each ``read(_:from:to:each:finished:)`` hands the records of `[from, to)` to `each`, in offset order, on the
/// reader's thread, then calls `finished` once: ``Outcome/completed(records:)`` at `to` (or at the end of the log,
/// when the range's last offsets do not exist; `to` nil: at the partition's high watermark as the range's first fetch
/// found it, so a range of a partition still written to ends), ``Outcome/stopped`` when `each` returned false, or
/// ``Outcome/failed(_:)`` (the partition delivered nothing for ``KafkaRangeReaderConfiguration/stallTimeout``, an
/// unknown partition, the reader closed). A new range of a partition that is still being read replaces the old one,
/// which ends `stopped`. Ranges of several partitions are read together over one librdkafka consumer, at most
/// ``KafkaRangeReaderConfiguration/maxConcurrentRanges`` at a time (the others wait their turn, in order).
///
/// The librdkafka consumer and the thread exist only while there is something to read, and for
/// ``KafkaRangeReaderConfiguration/idleTimeout`` after: a reader costs nothing between rebalances.
///
/// - Important: thread-safe. The librdkafka handle belongs to the reader's thread alone (created, polled and
///   destroyed there).
package final class KafkaRangeReader: Sendable {
    package typealias Configuration = KafkaRangeReaderConfiguration

    /// How a range ended.
    package enum Outcome: Sendable {
        /// Read to its end; `records` were handed to `each`.
        case completed(records: Int)
        /// `each` returned false, or a newer range of the partition replaced it.
        case stopped
        case failed(KafkaError)
    }

    private struct Range {
        let partition: KafkaTopicPartition
        /// The next offset to hand over.
        var next: Int64
        /// The first offset not to read; nil until the first fetch's high watermark sets it.
        var end: Int64?
        let each: @Sendable (KafkaRangeRecord) -> Bool
        let finished: @Sendable (Outcome) -> Void
        var records = 0
        var lastProgress = ContinuousClock.now
        /// The queue its partition's messages arrive on, while it is being read.
        var queue: RDKafkaQueue?
        /// Messages taken since its fetcher was last woken (see ``pollOnce(_:)``).
        var sinceWakeUp = 0
    }

    private struct State {
        /// Ranges not yet taken by the thread.
        var submitted: [Range] = []
        var threadRunning = false
        var closed = false
        /// The most ranges read at the same time so far.
        var mostAtOnce = 0
        /// Fetcher wake-ups sent so far (``pollOnce(_:)``).
        var wakeUps = 0
    }

    package let configuration: Configuration
    /// Messages prefetched per partition (`queued.min.messages`).
    static let prefetchMessages = 2_000
    /// How every range ends that the reader's close cut short or that came after it.
    private static let closedError = KafkaError(code: .closed, reason: "the range reader is closed")
    private let logger: Logger
    private let state = Mutex(State())
    /// Wakes an idle thread when a range is submitted or the reader closes.
    private let wakeUp = DispatchSemaphore(value: 0)
    /// Entered while a thread runs; ``close()`` waits for it.
    private let running = DispatchGroup()

    package init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: KafkaLoggingKeys.clientID] = configuration.clientID
        self.logger = logger
    }

    /// Reads `[from, to)` of `partition` (`to` nil: up to the high watermark its first fetch finds); see the type's
    /// rules. `each` and `finished` run on the reader's thread.
    package func read(
        _ partition: KafkaTopicPartition, from: Int64, to end: Int64?,
        each: @escaping @Sendable (KafkaRangeRecord) -> Bool,
        finished: @escaping @Sendable (Outcome) -> Void
    ) {
        let range = Range(partition: partition, next: max(0, from), end: end, each: each, finished: finished)
        let start = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.submitted.append(range)
            guard !state.threadRunning else { return false }
            state.threadRunning = true
            return true
        }
        switch start {
        case nil:
            finished(.failed(Self.closedError))
        case true?:
            running.enter()
            Thread { [self] in
                serve()
                running.leave()
            }.start()
        case false?:
            wakeUp.signal()
        }
    }

    /// Stops reading: every range not finished ends `failed` (code `closed`), the librdkafka consumer is destroyed,
    /// and later ranges fail at once. Waits for the reader's thread.
    package func close() {
        state.withLock { $0.closed = true }
        wakeUp.signal()
        running.wait()
    }

    /// Whether the reader has a thread (and a librdkafka consumer) now.
    var hasThread: Bool { state.withLock { $0.threadRunning } }

    /// The most ranges it has read at the same time.
    var mostRangesAtOnce: Int { state.withLock { $0.mostAtOnce } }

    /// How often it woke librdkafka's fetcher after draining a queue.
    var fetcherWakeUps: Int { state.withLock { $0.wakeUps } }

    // MARK: - The reader's thread

    /// What the thread owns: the librdkafka consumer while it has one, its topic handles, and the ranges it reads.
    private struct Session {
        var handle: RDKafkaHandle?
        var mainQueue: RDKafkaQueue?
        var topics: [String: RDKafkaTopic] = [:]
        var ranges: [KafkaTopicPartition: Range] = [:]
        /// Ranges waiting for one of ``ranges`` to end, in submission order.
        var waiting: [Range] = []
        var idleSince = ContinuousClock.now
    }

    private func serve() {
        ThreadName.setCurrent("kafka-range")
        var session = Session()
        while true {
            let (submitted, closed) = state.withLock { state in
                defer { state.submitted.removeAll() }
                return (state.submitted, state.closed)
            }
            if closed {
                for range in submitted + session.waiting { range.finished(.failed(Self.closedError)) }
                for partition in Array(session.ranges.keys) { end(partition, .failed(Self.closedError), in: &session) }
                break
            }
            for range in submitted { admit(range, into: &session) }
            if session.ranges.isEmpty {
                if ContinuousClock.now - session.idleSince >= configuration.idleTimeout, stopIfNothingSubmitted() { break }
                drainEvents(session)
                _ = wakeUp.wait(timeout: .now() + .milliseconds(100))
                continue
            }
            pollOnce(&session)
            failStalled(&session)
            while session.ranges.count < configuration.maxConcurrentRanges, !session.waiting.isEmpty {
                start(session.waiting.removeFirst(), in: &session)
            }
            drainEvents(session)
            if session.ranges.isEmpty { session.idleSince = .now }
        }
        for topic in session.topics.values { topic.destroy() }
        session.mainQueue?.destroy()
        session.handle?.destroy()
    }

    /// The thread stops when nothing was submitted meanwhile (decided under the lock `read` starts threads under).
    private func stopIfNothingSubmitted() -> Bool {
        state.withLock { state in
            guard state.submitted.isEmpty else { return false }
            state.threadRunning = false
            return true
        }
    }

    /// Starts `range` now, or queues it behind the ranges being read; either way it replaces a range of the same
    /// partition (being read or waiting).
    private func admit(_ range: Range, into session: inout Session) {
        if let index = session.waiting.firstIndex(where: { $0.partition == range.partition }) {
            session.waiting.remove(at: index).finished(.stopped)
        }
        if session.ranges[range.partition] == nil && session.ranges.count >= configuration.maxConcurrentRanges {
            session.waiting.append(range)
        } else {
            start(range, in: &session)
        }
    }

    /// Starts reading `range` on a queue of its own (replacing a range of the same partition).
    private func start(_ range: Range, in session: inout Session) {
        end(range.partition, .stopped, in: &session)
        guard range.next < range.end ?? .max else {
            range.finished(.completed(records: 0))
            return
        }
        do throws(KafkaError) {
            let (handle, topic) = try prepare(range.partition.topic, in: &session)
            guard let raw = rd_kafka_queue_new(handle.pointer) else {
                throw KafkaError(code: .creation, reason: "could not create a queue for \(range.partition)")
            }
            let queue = RDKafkaQueue(raw)
            guard rd_kafka_consume_start_queue(topic.pointer, range.partition.partition, range.next, raw) == 0 else {
                let error = KafkaError.rdKafka(rd_kafka_last_error())
                queue.destroy()
                throw error
            }
            var started = range
            started.queue = queue
            started.lastProgress = .now
            session.ranges[range.partition] = started
            let reading = session.ranges.count
            state.withLock { $0.mostAtOnce = max($0.mostAtOnce, reading) }
        } catch {
            logger.warning("kafka range reader cannot read", metadata: [
                KafkaLoggingKeys.topic: range.partition.topic, KafkaLoggingKeys.partition: String(range.partition.partition),
                KafkaLoggingKeys.error: error.description,
            ])
            range.finished(.failed(error))
        }
    }

    /// The librdkafka consumer (created if there is none) and `name`'s topic handle in it.
    private func prepare(_ name: String, in session: inout Session) throws(KafkaError) -> (RDKafkaHandle, RDKafkaTopic) {
        if session.handle == nil {
            let config = try RDKafkaConfig(configuration.dictionary)
            config.enableEvents(CRdKafka_EVENT_LOG() | CRdKafka_EVENT_ERROR())
            let handle = try RDKafkaHandle(kind: .consumer, config: config)
            guard let main = rd_kafka_queue_get_main(handle.pointer) else {
                throw KafkaError(code: .creation, reason: "could not get the range reader's main queue")
            }
            session.mainQueue = RDKafkaQueue(main)
            rd_kafka_set_log_queue(handle.pointer, main)
            session.handle = handle
        }
        guard let handle = session.handle else { throw KafkaError(code: .creation, reason: "no range reader client") }
        if let topic = session.topics[name] { return (handle, topic) }
        guard let topic = RDKafkaTopic(handle: handle, name: name) else {
            throw KafkaError.rdKafka(rd_kafka_last_error(), reason: "topic \(name)")
        }
        session.topics[name] = topic
        return (handle, topic)
    }

    /// Takes what the ranges' queues hold (up to 500 each); when none held anything, waits up to 10 ms on one.
    ///
    /// A queue below half the prefetch limit (`queued.min.messages`) after that many were taken from it may have been
    /// full, and librdkafka 2.0.2 then looks at its partition again only when the broker thread wakes on its own, up
    /// to 1 s later (as for the consumer's queue, `KafkaFetchWakeup`): a request to the partition's leader wakes it now.
    /// Without it a 20 000-record backlog took 2–3 s to read, in bursts of one prefetch a second.
    private func pollOnce(_ session: inout Session) {
        var taken = 0
        var drained: [KafkaTopicPartition] = []
        for partition in Array(session.ranges.keys) {
            // The range is read and written once per turn, not per record: a lookup hashes the topic's name.
            guard var range = session.ranges[partition], let queue = range.queue?.pointer else { continue }
            var turn = 0
            var outcome: Outcome?
            while turn < 500, outcome == nil, let raw = rd_kafka_consume_queue(queue, 0) {
                turn += 1
                outcome = take(raw, into: &range, handle: session.handle)
            }
            taken += turn
            range.sinceWakeUp += turn
            if outcome == nil && range.sinceWakeUp >= Self.prefetchMessages / 2
                && rd_kafka_queue_length(queue) < Self.prefetchMessages / 2 {
                range.sinceWakeUp = 0
                drained.append(partition)
            }
            session.ranges[partition] = range
            if let outcome { end(partition, outcome, in: &session) }
        }
        if !drained.isEmpty, let handle = session.handle {
            handle.wakeFetchers(drained)
            state.withLock { $0.wakeUps += drained.count }
        }
        guard taken == 0, let (partition, first) = session.ranges.first, let queue = first.queue?.pointer,
            let raw = rd_kafka_consume_queue(queue, 10)
        else { return }
        var range = first
        let outcome = take(raw, into: &range, handle: session.handle)
        session.ranges[partition] = range
        if let outcome { end(partition, outcome, in: &session) }
    }

    /// Hands one record of `range` over (its offset and value copied, the message destroyed first); returns how the
    /// range ends when this message ends it (its last record, the log's end, an error that will not pass).
    private func take(
        _ raw: UnsafeMutablePointer<rd_kafka_message_t>, into range: inout Range, handle: RDKafkaHandle?
    ) -> Outcome? {
        let err = raw.pointee.err
        let offset = raw.pointee.offset
        // Copied only when it will be handed over (not a duplicate below the range's next offset, nor an error).
        let record = err == RD_KAFKA_RESP_ERR_NO_ERROR && offset >= range.next ? KafkaRangeRecord(copying: raw) : nil
        rd_kafka_message_destroy(raw)
        switch err {
        case RD_KAFKA_RESP_ERR_NO_ERROR:
            guard let record else { return nil }
            if range.end == nil {
                // The fetch that brought this message set the cached high watermark.
                guard let high = handle?.cachedHighWatermark(of: range.partition), high > offset else {
                    return .failed(KafkaError(code: .fail, reason: "no high watermark for \(range.partition)"))
                }
                range.end = high
            }
            guard range.each(record) else { return .stopped }
            // After `each`: the time the caller took with the record is not the broker's silence.
            range.lastProgress = .now
            range.records += 1
            range.next = offset + 1
            return range.next >= range.end ?? .max ? .completed(records: range.records) : nil
        case RD_KAFKA_RESP_ERR__PARTITION_EOF:
            // The end of the log: nothing more to read in this range (its last offsets do not exist).
            return offset >= range.next ? .completed(records: range.records) : nil
        case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
            return .failed(KafkaError.rdKafka(err))
        default:
            // Transient (a broker down, a leader moving): librdkafka retries; a range that stays silent fails as stalled.
            logger.debug("kafka range reader fetch error", metadata: [
                KafkaLoggingKeys.topic: range.partition.topic, KafkaLoggingKeys.partition: String(range.partition.partition),
                KafkaLoggingKeys.error: KafkaError.rdKafka(err).description,
            ])
            return nil
        }
    }

    /// Stops reading `partition`'s range, if one is read (`rd_kafka_consume_stop` waits for its fetcher), and
    /// calls its `finished`.
    private func end(_ partition: KafkaTopicPartition, _ outcome: Outcome, in session: inout Session) {
        guard let range = session.ranges.removeValue(forKey: partition) else { return }
        if let topic = session.topics[partition.topic]?.pointer { rd_kafka_consume_stop(topic, partition.partition) }
        range.queue?.destroy()
        range.finished(outcome)
    }

    private func failStalled(_ session: inout Session) {
        let now = ContinuousClock.now
        for (partition, range) in session.ranges where now - range.lastProgress >= configuration.stallTimeout {
            let silent = "no record for \(configuration.stallTimeout) at offset \(range.next) of \(range.end.map(String.init) ?? "the high watermark")"
            end(partition, .failed(KafkaError(code: .timedOut, reason: silent)), in: &session)
        }
    }

    /// Serves the main queue (librdkafka's logs and errors) without blocking.
    private func drainEvents(_ session: Session) {
        guard let queue = session.mainQueue?.pointer else { return }
        var budget = 100
        while budget > 0, let event = RDKafkaEvent.poll(queue, timeoutMilliseconds: 0) {
            budget -= 1
            switch event {
            case .log(let level, let facility, let message)?:
                logger.librdkafka(level: level, facility: facility, message: message)
            case .error(let error)?:
                logger.debug("kafka range reader error", metadata: [KafkaLoggingKeys.error: error.description])
            default:
                break
            }
        }
    }
}
