internal import CRdKafka
import Foundation
import Synchronization
package import Telemetry

/// A consumer-group member subscribed to a set of topics (e.g. the main topic and its retry tiers) with
/// at-least-once delivery and many messages in flight.
///
/// Messages go to a ``KafkaConsumerDelegate`` on a dedicated poll thread. The caller completes each one with
/// ``complete(_:)`` from any thread, in any order; a per-partition ``KafkaOffsetTracker`` stores the lowest
/// unfinished offset (or the highest delivered + 1), and librdkafka's auto-committer commits it. A message that
/// is not due yet is handed back with ``hold(_:until:)``: its partition is paused and the message is delivered
/// again when due, while polling continues.
///
/// Partitions are paused when their in-flight count or the global in-flight budget is full and resumed when they
/// drain. Only partitions this consumer paused are ever resumed.
///
/// Close with ``close()`` (drain, store, leave the group) or, to simulate a crash in tests, ``abandon()``.
package final class KafkaConsumer: Sendable {
    /// The subscribed topics.
    let topics: [String]
    /// Topics whose partition *p* this member takes with partition *p* of the subscribed topics (see ``init``).
    let companionTopics: [String]
    /// The `topics` given to ``init``: the first record of a newly assigned partition of these has its wait observed
    /// (`callpush_kafka_assignment_wait_seconds`; a companion's records wait on purpose, until due).
    let measuredTopics: Set<String>
    let configuration: KafkaConsumerConfiguration
    let logger: Logger
    let metrics: KafkaConsumerMetrics
    let handle: RDKafkaHandle
    let mainQueue: RDKafkaQueue
    let consumerQueue: RDKafkaQueue
    let state: Mutex<State>
    let delegateBox: Mutex<(any KafkaConsumerDelegate)?>
    /// librdkafka statistics parsed off the poll thread, waiting for it to apply them (``drainEvents()``).
    let parsedStatistics = Mutex<KafkaStatistics?>(nil)
    /// When to wake librdkafka's fetcher (poll thread only); `nil` from librdkafka 2.3.0 on, where a backed-off
    /// partition waits out `fetch.queue.backoff.ms` whatever wakes its broker thread.
    let fetchWakeup: Mutex<KafkaFetchWakeup>?
    /// Whether back-pressure pauses a partition or all intake (as of the poll thread's last reconcile, or since a
    /// pause was wanted): ``wakeForCompletions()`` wakes the poll thread only then.
    let backPressured = Atomic<Bool>(false)
    private let rebalanceContext: RebalanceContext

    /// Creates the consumer, subscribes and starts the poll thread.
    ///
    /// - Parameters:
    ///   - topics: the topics to subscribe to; they must exist (topics are not auto-created).
    ///   - companionTopics: topics (with as many partitions) whose partition *p* goes wherever partition *p* of
    ///     `topics` goes: with cooperative rebalancing they are not subscribed, but assigned and revoked with it in
    ///     the same rebalance callback, their offsets committed through the group; with eager rebalancing they are
    ///     subscribed and the `range` assignor keeps them together. Default: none.
    ///   - configuration: settings; see ``KafkaConsumerConfiguration``.
    ///   - delegate: receives messages and events on the poll thread; retained until the consumer is closed.
    ///   - logger: librdkafka logs and errors go here (at info level and below).
    ///   - metrics: the registry for the consumer's series. Default: a private registry.
    /// - Throws: ``KafkaError`` for invalid configuration or a failed subscription.
    package init(
        topics: [String],
        companionTopics: [String] = [],
        configuration: KafkaConsumerConfiguration,
        delegate: any KafkaConsumerDelegate,
        logger: Logger,
        metrics: MetricsRegistry = MetricsRegistry()
    ) throws(KafkaError) {
        guard !topics.isEmpty else { throw KafkaError.configuration("no topics to subscribe to") }
        let cooperative = configuration.rebalancing == .cooperative
        self.topics = cooperative ? topics : topics + companionTopics
        self.companionTopics = cooperative ? companionTopics : []
        self.measuredTopics = Set(topics)
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: KafkaLoggingKeys.groupID] = configuration.groupID
        logger[metadataKey: KafkaLoggingKeys.clientID] = configuration.clientID
        self.logger = logger
        self.metrics = KafkaConsumerMetrics(registry: metrics, topics: topics + companionTopics)
        self.state = Mutex(State())
        self.delegateBox = Mutex(delegate)
        self.fetchWakeup = rd_kafka_version() < 0x0203_0000 ? Mutex(configuration.fetchWakeup) : nil

        let context = RebalanceContext()
        self.rebalanceContext = context
        let config = try RDKafkaConfig(configuration.dictionary)
        config.enableEvents(
            CRdKafka_EVENT_LOG() | CRdKafka_EVENT_ERROR() | CRdKafka_EVENT_STATS() | CRdKafka_EVENT_OFFSET_COMMIT())
        rd_kafka_conf_set_opaque(config.pointer, Unmanaged.passUnretained(context).toOpaque())
        rd_kafka_conf_set_rebalance_cb(config.pointer, kafkaConsumerRebalanceCallback)
        let handle = try RDKafkaHandle(kind: .consumer, config: config)
        self.handle = handle
        guard let main = rd_kafka_queue_get_main(handle.pointer),
            let consumer = rd_kafka_queue_get_consumer(handle.pointer)
        else {
            throw KafkaError(code: .creation, reason: "could not get the consumer's queues")
        }
        self.mainQueue = RDKafkaQueue(main)
        self.consumerQueue = RDKafkaQueue(consumer)
        // Logs go to the main queue (log.queue=true), which the poll thread drains.
        rd_kafka_set_log_queue(handle.pointer, main)

        let subscription = RDKafkaTopicPartitionList(capacity: self.topics.count)
        for topic in self.topics { subscription.add(topic: topic) }
        let err = rd_kafka_subscribe(handle.pointer, subscription.pointer)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            mainQueue.destroy()
            consumerQueue.destroy()
            throw KafkaError.rdKafka(err)
        }

        context.consumer.withLock { $0 = WeakConsumer(value: self) }
        let thread = Thread { [self] in self.runPollLoop() }
        thread.start()
    }

    // MARK: - Caller API

    /// Marks a delivered message as processed, from any thread. Its offset becomes committable once every lower
    /// offset of its partition is complete. Completions that arrive while its partition's revoke waits for
    /// in-flight work count; those after the revoke finished (or unknown/duplicate ones) are ignored.
    package func complete(_ message: KafkaMessage) {
        state.withLock { state in
            var last: PartitionLookup?
            if countCompletion(message, in: &state, after: &last) { liftBackPressure(&state) }
        }
    }

    /// Completes `messages` under one lock, as ``complete(_:)`` does each.
    package func complete(contentsOf messages: [KafkaMessage]) {
        guard !messages.isEmpty else { return }
        state.withLock { state in
            var mayLift = false
            var last: PartitionLookup?
            for message in messages {
                if countCompletion(message, in: &state, after: &last) { mayLift = true }
            }
            if mayLift { liftBackPressure(&state) }
        }
    }

    /// Counts `message` completed, unless its partition is gone or of a newer generation.
    /// - Returns: whether back-pressure may lift now.
    /// `last`: the partition of the completion before (``State/partitionIndex(of:after:)``).
    private func countCompletion(_ message: KafkaMessage, in state: inout State, after last: inout PartitionLookup?) -> Bool {
        // A partition being revoked still counts completions (the revoke waits for them); once the revoke is over
        // its state is gone (or belongs to a newer generation) and the completion is ignored.
        guard let index = state.partitionIndex(of: message, after: &last) else { return false }
        // In place: reading `values[index]` would copy the whole entry (tracker, held messages) per message.
        let (completed, pausedForBackPressure, inFlight) = Self.countCompletion(message, in: &state.partitions.values[index])
        guard completed else { return false }
        state.totalInFlight -= 1
        return (pausedForBackPressure || state.globallyPaused)
            && state.backPressureMayLift(pausedForBackPressure: pausedForBackPressure, inFlight: inFlight,
                                         limits: configuration.backPressure)
    }

    /// Has the poll thread reconcile its pauses at once (completions may have lifted back-pressure).
    private func liftBackPressure(_ state: inout State) {
        state.reconcileNeeded = true
        if let queue = consumerQueue.pointer { rd_kafka_queue_yield(queue) }
    }

    /// Wakes the poll thread when back-pressure has paused intake, from any thread: completions waiting for its
    /// next turn (a settlement that completes messages there) may lift it. Otherwise the turn comes by itself, within
    /// the poll timeout.
    package func wakeForCompletions() {
        guard backPressured.load(ordering: .relaxed), let queue = consumerQueue.pointer else { return }
        rd_kafka_queue_yield(queue)
    }

    /// Gives a delivered message back unprocessed, from any thread: it stays unfinished — its offset (and every
    /// later one of its partition) is not committed, so the partition's next owner or the next start reads it
    /// again — but a revoke or close no longer waits for it. For work that must not be done by this member now
    /// (e.g. a push that has to wait for a read-ahead when the partition is being taken away).
    package func giveBack(_ message: KafkaMessage) {
        state.withLock { state in
            guard let index = state.partitions.index(forKey: message.topicPartition),
                state.partitions.values[index].generation == message.generation
            else { return }
            state.partitions.values[index].givenBack += 1
        }
    }

    /// Counts `message` completed in its partition's `entry` (when it is of the entry's generation).
    /// - Returns: whether it counted, and the entry's back-pressure pause and in-flight count after it.
    private static func countCompletion(_ message: KafkaMessage, in entry: inout PartitionState) -> (Bool, Bool, Int) {
        let counted = entry.generation == message.generation && entry.tracker.completed(message.offset)
        return (counted, entry.pausedForBackPressure, entry.tracker.inFlightCount)
    }

    /// Hands a delivered message back because it is not due yet, from any thread (typically from inside
    /// ``KafkaConsumerDelegate/consumer(_:didReceive:)``). The consumer keeps it in memory, pauses its partition
    /// and delivers it again to the delegate at `deadline` (then resumes the partition), while polling continues,
    /// with ``KafkaMessage/releasedFromHold`` set. The message stays in flight: its offset is not committed until it
    /// is completed after redelivery. Messages of the partition that arrive meanwhile are held behind it, in order.
    ///
    /// - Returns: `false` if the message's partition is no longer assigned (the message is dropped; the new
    ///   owner gets it again).
    @discardableResult
    package func hold(_ message: KafkaMessage, until deadline: ContinuousClock.Instant) -> Bool {
        let partition = message.topicPartition
        return state.withLock { state in
            guard let index = state.partitions.index(forKey: partition),
                Self.hold(message, until: deadline, in: &state.partitions.values[index])
            else { return false }
            state.heldCount += 1
            state.reconcileNeeded = true
            if let queue = consumerQueue.pointer { rd_kafka_queue_yield(queue) }
            return true
        }
    }

    /// Keeps `message` among `entry`'s held messages, in due order (in place: a copy of the entry would copy its
    /// held messages and tracker); false when the partition is being revoked or was assigned again since.
    private static func hold(_ message: KafkaMessage, until deadline: ContinuousClock.Instant,
                             in entry: inout PartitionState) -> Bool {
        guard entry.generation == message.generation, !entry.revoked else { return false }
        let index = entry.held.partitionPoint(where: { $0.due > deadline })
        var released = message
        released.releasedFromHold = true
        entry.held.insert(HeldMessage(message: released, due: deadline), at: index)
        return true
    }

    /// Like ``hold(_:until:)`` with a deadline `delay` from now.
    @discardableResult
    package func hold(_ message: KafkaMessage, for delay: Duration) -> Bool {
        hold(message, until: .now + delay)
    }

    /// The partitions currently assigned to this member.
    var assignment: [KafkaTopicPartition] {
        state.withLock { state in state.partitions.filter { !$0.value.revoked }.map(\.key) }
    }

    /// Messages handed out and not yet completed (held ones included).
    package var inFlightCount: Int { state.withLock { $0.totalInFlight } }

    /// Partitions currently paused by this consumer, with the reason (`"backpressure"`, `"retry_due"` or
    /// `"rebalance"`).
    var pausedPartitions: [KafkaTopicPartition: String] {
        state.withLock { state in
            var result: [KafkaTopicPartition: String] = [:]
            for (partition, entry) in state.partitions where entry.libraryPaused {
                result[partition] = entry.pauseReason(globallyPaused: state.globallyPaused)
            }
            return result
        }
    }

    /// Stops intake, waits up to `closeDrainTimeout` for in-flight messages, stores offsets, leaves the group
    /// (`rd_kafka_consumer_close`, which commits) and destroys the handle. Returns when all that is done.
    /// Held messages are dropped uncompleted, so they are consumed again later. Idempotent.
    package func close() async {
        await shutdown(.closing)
    }

    /// Destroys the handle without storing offsets, committing or leaving the group, as a crash would (for
    /// tests). Everything since the last auto-commit is consumed again by the next owner. Idempotent.
    func abandon() async {
        await shutdown(.abandoning)
    }

    private func shutdown(_ phase: Phase) async {
        // Bounded: if librdkafka never lets the poll thread finish, return anyway (the thread is leaked).
        let bound = configuration.closeDrainTimeout + configuration.revokeDrainTimeout + .seconds(15)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiterID = state.withLock { state -> Int? in
                if state.phase == .finished { return nil }
                if state.phase == .running { state.phase = phase }
                let id = state.nextWaiterID
                state.nextWaiterID += 1
                state.closeWaiters[id] = continuation
                if let queue = consumerQueue.pointer { rd_kafka_queue_yield(queue) }
                return id
            }
            guard let waiterID else { return continuation.resume() }
            // Weak, on a Dispatch timer: a shutdown that finished must not keep the consumer alive for the rest of
            // the bound (see KafkaProducer.close). While the poll thread runs, the thread keeps it.
            DispatchQueue.global().asyncAfter(deadline: .now() + bound.inSeconds) { [weak self] in
                guard let self, let waiter = state.withLock({ $0.closeWaiters.removeValue(forKey: waiterID) }) else { return }
                logger.info("consumer shutdown did not finish in time; returning without it")
                waiter.resume()
            }
        }
    }

    var delegate: (any KafkaConsumerDelegate)? { delegateBox.withLock { $0 } }

}

// MARK: - State

extension KafkaConsumer {
    enum Phase: Equatable, Sendable {
        case running
        case closing
        case abandoning
        case finished
    }

    struct HeldMessage: Sendable {
        var message: KafkaMessage
        var due: ContinuousClock.Instant
    }

    struct PartitionState: Sendable {
        let generation: UInt64
        var tracker = KafkaOffsetTracker()
        /// The last offset passed to `rd_kafka_offsets_store`.
        var lastStored: Int64?
        /// Where another member would start reading this partition: its last commit that succeeded, or (none yet)
        /// the first offset read in this assignment. What lies between it and the highest offset read is what a
        /// next owner reads again (``KafkaHandoverLedger``).
        var lastCommit: Int64?
        /// Where this assignment resumed and how far the one before it had read: a revoke hands both on (to the next
        /// resume and to ``KafkaHandoverLedger``) as far as this assignment has not read past them.
        var resumedFrom: (offset: Int64, end: Int64)?
        /// The highest offset this member has read of the partition, in this assignment or the one it resumed.
        var highestRead: Int64? {
            [tracker.highestDelivered, resumedFrom.map { $0.end - 1 }].compactMap { $0 }.max()
        }
        /// The high watermark from the first fetch after the assignment (see ``KafkaMessage/highWatermarkAtAssignment``).
        var highWatermarkAtAssignment: Int64?
        var pausedForBackPressure = false
        /// Whether librdkafka has this partition paused (by us).
        var libraryPaused = false
        /// Assigned, not being revoked and not paused: librdkafka fetches it (a fetch wake-up is for these).
        var isFetching: Bool { !revoked && !libraryPaused }
        /// Not-yet-due messages, ordered by due time; non-empty means paused for `retry_due`.
        var held: [HeldMessage] = []
        /// When the partition was last resumed, until the poll loop has woken its broker thread a second time (see
        /// `KafkaConsumer.wakeResumedPartitionsAgain(now:)`).
        var resumedAt: ContinuousClock.Instant?

        /// Why the partition is (or would be) paused: a held message first, then the in-flight limits (its own, or
        /// the consumer's when `globallyPaused`), then a rebalance.
        func pauseReason(globallyPaused: Bool) -> String {
            if !held.isEmpty { return "retry_due" }
            return pausedForBackPressure || globallyPaused ? "backpressure" : "rebalance"
        }

        /// While the partition waits for a held message, keeps `message` behind it, in order; false when nothing
        /// is held.
        mutating func holdBehindHeld(_ message: KafkaMessage) -> Bool {
            guard let last = held.last else { return false }
            held.append(HeldMessage(message: message, due: last.due))
            return true
        }
        /// Messages the delegate gave back unprocessed (``KafkaConsumer/giveBack(_:)``): still unfinished, but
        /// nothing a revoke or close waits for.
        var givenBack = 0
        /// Set when a revoke has begun: nothing more is delivered or held; completions still count until the
        /// revoke removes the state.
        var revoked = false
        /// No record has been read since the assignment (its first one's wait is observed).
        var awaitsFirstRecord = true
    }

    /// A partition found in ``State/partitions`` (``State/partitionIndex(of:after:)``).
    struct PartitionLookup {
        let topic: String
        let partition: Int32
        let index: Dictionary<KafkaTopicPartition, PartitionState>.Index
    }

    struct State: Sendable {
        var phase: Phase = .running
        var partitions: [KafkaTopicPartition: PartitionState] = [:]
        var generation: UInt64 = 0
        var totalInFlight = 0
        /// At least the in-flight count of the fullest partition: raised as messages are accepted, set to the exact
        /// value by each ``KafkaConsumer/reconcilePauses()`` (completions only lower the counts). It bounds how many
        /// messages the poll thread accepts under one lock.
        var peakPartitionInFlight = 0
        /// Held messages over all partitions (so the poll loop skips held-message work when there is none).
        var heldCount = 0
        var globallyPaused = false
        var reconcileNeeded = false
        /// The second round a cooperative rebalance owes this member after it gave partitions up.
        var secondRound = KafkaSecondRoundWatch()
        /// Messages accepted during the current poll-loop turn, not yet handed to the delegate (poll thread only;
        /// here so that accepting a message takes one lock).
        var pendingBatch: [KafkaMessage] = []
        /// Since when the group refuses commits because it is rebalancing: take no new messages until the
        /// rebalance is done (what would be finished now could not be committed, and the next owner would repeat
        /// it), a commit succeeds, or a session timeout passes.
        var commitsRefusedSince: ContinuousClock.Instant?
        /// Where each partition given back by the last (not lost) revoke resumes if the assignment that follows
        /// gives it back.
        var resumePoints: [KafkaTopicPartition: Int64] = [:]
        /// Partitions given away and not assigned again yet: what their next owner reads again.
        var handovers = KafkaHandoverLedger()
        var closeWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID = 0

        /// Visits every partition's entry in place. A `for (partition, var entry) in partitions` loop that writes the
        /// entry back copies the whole dictionary (the loop still holds it), and so does one over `partitions.indices`.
        mutating func forEachPartition(_ body: (KafkaTopicPartition, inout PartitionState) -> Void) {
            var index = partitions.startIndex
            while index != partitions.endIndex {
                body(partitions.keys[index], &partitions.values[index])
                partitions.formIndex(after: &index)
            }
        }

        /// The index of `message`'s partition in ``partitions``; `last` is the previous lookup of the same pass
        /// (while ``partitions`` does not change): a message of the partition looked up before, as consecutive
        /// messages mostly are, is found without hashing its topic.
        func partitionIndex(
            of message: KafkaMessage, after last: inout PartitionLookup?
        ) -> Dictionary<KafkaTopicPartition, PartitionState>.Index? {
            if let last, last.partition == message.partition, last.topic == message.topic { return last.index }
            guard let index = partitions.index(forKey: message.topicPartition) else { return nil }
            last = PartitionLookup(topic: message.topic, partition: message.partition, index: index)
            return index
        }

        /// Whether a completion may allow a back-pressure pause to lift.
        func backPressureMayLift(
            pausedForBackPressure: Bool, inFlight: Int, limits: KafkaConsumerConfiguration.BackPressure
        ) -> Bool {
            let (perLow, globalLow) = Self.lowWatermarks(limits)
            if globallyPaused, totalInFlight <= globalLow { return true }
            return pausedForBackPressure && inFlight <= perLow
        }

        static func lowWatermarks(_ limits: KafkaConsumerConfiguration.BackPressure) -> (Int, Int) {
            let fraction = min(max(limits.resumeFraction, 0), 1)
            return (
                Int(Double(limits.maxInFlightPerPartition) * fraction),
                Int(Double(limits.maxInFlight) * fraction)
            )
        }
    }
}

// MARK: - Rebalance context

/// The one object behind librdkafka's opaque pointer; reaches the consumer from the rebalance callback.
final class RebalanceContext: Sendable {
    let consumer = Mutex<WeakConsumer?>(nil)
}

struct WeakConsumer: Sendable {
    weak var value: KafkaConsumer?
}

/// The rebalance callback: runs on the poll thread, inside `rd_kafka_consumer_poll` or `rd_kafka_consumer_close`.
///
/// - Important: The parameter types must match `rd_kafka_conf_set_rebalance_cb`'s function pointer type.
private func kafkaConsumerRebalanceCallback(
    _ rk: OpaquePointer?,
    _ err: rd_kafka_resp_err_t,
    _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let opaque else {
        rd_kafka_assign(rk, nil)
        return
    }
    let context = Unmanaged<RebalanceContext>.fromOpaque(opaque).takeUnretainedValue()
    guard let consumer = context.consumer.withLock({ $0?.value }) else {
        rd_kafka_assign(rk, nil)
        return
    }
    consumer.rebalance(err, partitions: partitions)
}
