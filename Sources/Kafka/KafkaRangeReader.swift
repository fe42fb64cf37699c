internal import CRdKafka
import Foundation
import Synchronization
public import Telemetry

/// Reads given offset ranges of partitions, outside any consumer group and beside it: a worker reads the backlog of
/// a partition it was just assigned ahead of its own consumer, which must not wait for it.
///
/// Each ``read(_:from:to:each:finished:)`` hands the records of `[from, to)` to `each`, in offset order, on the
/// reader's thread, then calls `finished` once: ``Outcome/completed(records:)`` at `to` (or at the end of the log,
/// when the range's last offsets do not exist), ``Outcome/stopped`` when `each` returned false, or
/// ``Outcome/failed(_:)`` (the partition delivered nothing for ``KafkaRangeReaderConfiguration/stallTimeout``, an
/// unknown partition, the reader closed). A new range of a partition that is still being read replaces the old one,
/// which ends `stopped`. Ranges of several partitions are read together over one librdkafka consumer.
///
/// The librdkafka consumer and the thread exist only while there is something to read, and for
/// ``KafkaRangeReaderConfiguration/idleTimeout`` after: a reader costs nothing between rebalances.
///
/// - Important: thread-safe. The librdkafka handle belongs to the reader's thread alone (created, polled and
///   destroyed there).
public final class KafkaRangeReader: Sendable {
    public typealias Configuration = KafkaRangeReaderConfiguration

    /// How a range ended.
    public enum Outcome: Sendable {
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
        let end: Int64
        let each: @Sendable (KafkaMessage) -> Bool
        let finished: @Sendable (Outcome) -> Void
        var records = 0
        var lastProgress = ContinuousClock.now
    }

    private struct State {
        /// Ranges not yet taken by the thread.
        var submitted: [Range] = []
        var threadRunning = false
        var closed = false
    }

    public let configuration: Configuration
    private let logger: Logger
    private let state = Mutex(State())
    /// Wakes an idle thread when a range is submitted or the reader closes.
    private let wakeUp = DispatchSemaphore(value: 0)
    /// Entered while a thread runs; ``close()`` waits for it.
    private let running = DispatchGroup()

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: KafkaLoggingKeys.clientID] = configuration.clientID
        self.logger = logger
    }

    /// Reads `[from, to)` of `partition`; see the type's rules. `each` and `finished` run on the reader's thread.
    public func read(
        _ partition: KafkaTopicPartition, from: Int64, to end: Int64,
        each: @escaping @Sendable (KafkaMessage) -> Bool,
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
            finished(.failed(KafkaError(code: .closed, reason: "the range reader is closed")))
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
    public func close() {
        state.withLock { $0.closed = true }
        wakeUp.signal()
        running.wait()
    }

    /// Whether the reader has a thread (and a librdkafka consumer) now.
    var hasThread: Bool { state.withLock { $0.threadRunning } }

    // MARK: - The reader's thread

    /// What the thread owns: the librdkafka consumer while it has one, and the ranges it reads.
    private struct Session {
        var handle: RDKafkaHandle?
        var mainQueue: RDKafkaQueue?
        var ranges: [KafkaTopicPartition: Range] = [:]
        /// The ranges changed since the last `rd_kafka_assign`.
        var assignmentChanged = false
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
                for range in session.ranges.values + submitted {
                    range.finished(.failed(KafkaError(code: .closed, reason: "the range reader is closed")))
                }
                session.ranges.removeAll()
                break
            }
            for range in submitted { take(range, into: &session) }
            if session.ranges.isEmpty {
                if ContinuousClock.now - session.idleSince >= configuration.idleTimeout, stopIfNothingSubmitted() { break }
                drainEvents(session)
                _ = wakeUp.wait(timeout: .now() + .milliseconds(100))
                continue
            }
            guard prepare(&session) else { continue }
            pollOnce(&session)
            failStalled(&session)
            drainEvents(session)
            if session.ranges.isEmpty { session.idleSince = .now }
        }
        if let handle = session.handle {
            session.mainQueue?.destroy()
            // Never joined a group: nothing to leave or commit.
            handle.destroy(flags: CRdKafka_DESTROY_F_NO_CONSUMER_CLOSE())
        }
    }

    /// The thread stops when nothing was submitted meanwhile (decided under the lock `read` starts threads under).
    private func stopIfNothingSubmitted() -> Bool {
        state.withLock { state in
            guard state.submitted.isEmpty else { return false }
            state.threadRunning = false
            return true
        }
    }

    private func take(_ range: Range, into session: inout Session) {
        guard range.next < range.end else {
            range.finished(.completed(records: 0))
            return
        }
        if let replaced = session.ranges.updateValue(range, forKey: range.partition) { replaced.finished(.stopped) }
        session.assignmentChanged = true
    }

    /// Creates the librdkafka consumer if there is none and assigns the ranges' partitions at their next offsets;
    /// false (the ranges failed) when it cannot.
    private func prepare(_ session: inout Session) -> Bool {
        do throws(KafkaError) {
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
            guard session.assignmentChanged else { return true }
            try assign(session)
            session.assignmentChanged = false
            return true
        } catch {
            logger.warning("kafka range reader cannot read", metadata: [KafkaLoggingKeys.error: error.description])
            for range in session.ranges.values { range.finished(.failed(error)) }
            session.ranges.removeAll()
            return false
        }
    }

    private func assign(_ session: Session) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(capacity: max(1, session.ranges.count))
        for range in session.ranges.values { list.add(range.partition, offset: range.next) }
        let err = rd_kafka_assign(session.handle?.pointer, session.ranges.isEmpty ? nil : list.pointer)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError.rdKafka(err) }
    }

    /// Polls one message, waiting up to 100 ms, then takes what is already fetched (up to 500).
    private func pollOnce(_ session: inout Session) {
        var wait: Int32 = 100
        var taken = 0
        while taken < 500, let handle = session.handle?.pointer, let raw = rd_kafka_consumer_poll(handle, wait) {
            wait = 0
            taken += 1
            deliver(raw, in: &session)
            rd_kafka_message_destroy(raw)
        }
        if session.assignmentChanged {
            // Ranges ended: the partitions they read are unassigned (the rest keep their positions).
            do throws(KafkaError) {
                try assign(session)
                session.assignmentChanged = false
            } catch {
                logger.debug("kafka range reader could not unassign", metadata: [KafkaLoggingKeys.error: error.description])
            }
        }
    }

    private func deliver(_ raw: UnsafeMutablePointer<rd_kafka_message_t>, in session: inout Session) {
        let topic = raw.pointee.rkt.flatMap { rd_kafka_topic_name($0) }.map { String(cString: $0) } ?? ""
        let partition = KafkaTopicPartition(topic: topic, partition: raw.pointee.partition)
        guard var range = session.ranges[partition] else { return }
        switch raw.pointee.err {
        case RD_KAFKA_RESP_ERR_NO_ERROR:
            guard raw.pointee.offset >= range.next else { return }
            range.lastProgress = .now
            guard range.each(KafkaMessage(copying: raw)) else {
                end(partition, .stopped, in: &session)
                return
            }
            range.records += 1
            range.next = raw.pointee.offset + 1
            session.ranges[partition] = range
            if range.next >= range.end { end(partition, .completed(records: range.records), in: &session) }
        case RD_KAFKA_RESP_ERR__PARTITION_EOF:
            // The end of the log: nothing more to read in this range (its last offsets do not exist).
            if raw.pointee.offset >= range.next { end(partition, .completed(records: range.records), in: &session) }
        case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC,
            RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
            end(partition, .failed(KafkaError.rdKafka(raw.pointee.err)), in: &session)
        default:
            // Transient (a broker down, a leader moving): librdkafka retries; a range that stays silent fails as stalled.
            logger.debug("kafka range reader fetch error", metadata: [
                KafkaLoggingKeys.topic: topic, KafkaLoggingKeys.partition: String(partition.partition),
                KafkaLoggingKeys.error: KafkaError.rdKafka(raw.pointee.err).description,
            ])
        }
    }

    private func end(_ partition: KafkaTopicPartition, _ outcome: Outcome, in session: inout Session) {
        guard let range = session.ranges.removeValue(forKey: partition) else { return }
        session.assignmentChanged = true
        range.finished(outcome)
    }

    private func failStalled(_ session: inout Session) {
        let now = ContinuousClock.now
        for (partition, range) in session.ranges where now - range.lastProgress >= configuration.stallTimeout {
            let silent = "no record for \(configuration.stallTimeout) at offset \(range.next) of \(range.end)"
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
                logger.log(KafkaConsumer.logLevel(syslog: level), "librdkafka: \(message)",
                           metadata: [KafkaLoggingKeys.facility: facility])
            case .error(let error)?:
                logger.debug("kafka range reader error", metadata: [KafkaLoggingKeys.error: error.description])
            default:
                break
            }
        }
    }
}
