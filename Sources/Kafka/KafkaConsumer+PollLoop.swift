internal import CRdKafka
import Foundation
import Synchronization
import Telemetry

// Everything here runs on the consumer's poll thread.
extension KafkaConsumer {
    func runPollLoop() {
        ThreadName.setCurrent("kafka-consume")
        var nextStore = ContinuousClock.now + configuration.offsetStoreInterval
        var exitPhase = Phase.closing
        while true {
            let (phase, held, reconcile) = state.withLock { ($0.phase, $0.heldCount, $0.reconcileNeeded) }
            if phase != .running {
                exitPhase = phase
                break
            }
            if held > 0 { deliverDueHeldMessages() }
            let now = ContinuousClock.now
            if now >= nextStore {
                // Periodic housekeeping: store offsets, refresh pause state and gauges, serve events.
                expireCommitRefusal(now: now)
                reportOverdueRound(now: now)
                storeOffsets()
                wakeResumedPartitionsAgain(now: now)
                reconcilePauses()
                drainEvents()
                nextStore = now + configuration.offsetStoreInterval
            } else if reconcile {
                reconcilePauses()
            }
            pollOnce(timeout: held > 0 ? nextPollTimeout() : configuration.pollTimeout.kafkaTimeoutMilliseconds)
        }
        if exitPhase == .abandoning {
            finish(destroyFlags: CRdKafka_DESTROY_F_NO_CONSUMER_CLOSE())
        } else {
            closeGracefully()
            // Already closed (or the close failed, e.g. after a fatal error, when a closing rd_kafka_destroy would
            // spin forever in 2.0.2): never let destroy close the consumer again.
            finish(destroyFlags: CRdKafka_DESTROY_F_NO_CONSUMER_CLOSE())
        }
    }

    // MARK: - Messages

    private func nextPollTimeout() -> Int32 {
        let base = configuration.pollTimeout
        let earliest = state.withLock { state in
            state.partitions.values.compactMap { $0.held.first?.due }.min()
        }
        guard let earliest else { return base.kafkaTimeoutMilliseconds }
        let untilDue = earliest - ContinuousClock.now
        return min(base, max(.zero, untilDue)).kafkaTimeoutMilliseconds + (untilDue > .zero ? 1 : 0)
    }

    /// Polls one message (or serves callbacks), then takes whatever else is already fetched without waiting, up to
    /// ``KafkaConsumerConfiguration/deliveryBatchSize``, and hands the accepted messages to the delegate as one batch.
    func pollOnce(timeout: Int32) {
        var wait = timeout
        var taken = 0
        var takenBytes = 0
        var chunk: [KafkaMessage] = []
        chunk.reserveCapacity(Self.acceptChunk)
        // Taken from librdkafka and accepted a chunk at a time (one state lock each), each chunk no larger than what
        // every partition and the global limit still admit, so back-pressure pauses exactly at its limits.
        var room = 1
        var topic = ""
        while taken < configuration.deliveryBatchSize {
            chunk.removeAll(keepingCapacity: true)
            while chunk.count < room, taken < configuration.deliveryBatchSize,
                let raw = rd_kafka_consumer_poll(handle.pointer, wait)
            {
                wait = 0
                taken += 1
                let err = raw.pointee.err
                if err != RD_KAFKA_RESP_ERR_NO_ERROR {
                    rd_kafka_message_destroy(raw)
                    handleConsumerError(err)
                    continue
                }
                takenBytes += raw.pointee.len + raw.pointee.key_len
                topic = KafkaMessage.topicName(of: raw, previous: topic)
                chunk.append(KafkaMessage(copying: raw, topic: topic))
                rd_kafka_message_destroy(raw)
            }
            guard !chunk.isEmpty else { break }
            let accepted = accept(chunk)
            // A partition (or all) reached its in-flight limit: hand over what we have and pause before taking more.
            if accepted.pauseWanted { break }
            if chunk.count < room { break }  // the local queue is empty
            room = accepted.room
        }
        if fetchWakeup != nil, let queue = consumerQueue.pointer {
            let length = rd_kafka_queue_length(queue)
            if fetchWakeup?.withLock({ $0.observe(queueLength: length, takenMessages: taken, takenBytes: takenBytes) }) == true {
                let fetching = state.withLock { state in
                    state.partitions.compactMap { partition, entry in entry.isFetching ? partition : nil }
                }
                wakeFetcher(fetching, reason: .queueDrained)
            }
        }
        deliverBatch()
        delegate?.consumerDidPoll(self)
    }

    /// Wakes the broker threads of `partitions`' leaders: a ListOffsets request for their latest offsets, sent and
    /// not waited for. With a timeout of 0 `rd_kafka_offsets_for_times` enqueues the request on each leader's broker
    /// thread — which wakes it, so it re-checks its partitions and fetches again — and returns `_TIMED_OUT` at once;
    /// librdkafka drops the reply when it comes. Used after the consumer drained a full queue (``KafkaFetchWakeup``),
    /// after it resumed partitions (``reconcilePauses()``), and after a rebalance callback
    /// (``wakePartitionsAfterRebalance()``).
    private func wakeFetcher(_ partitions: [KafkaTopicPartition], reason: KafkaConsumerMetrics.FetchWakeupReason) {
        guard !partitions.isEmpty else { return }
        handle.wakeFetchers(partitions)
        metrics.fetchWakeups[reason]?.increment()
    }

    /// Wakes the fetcher of every partition still fetched after a rebalance callback, and once more one offset-store
    /// interval later. librdkafka 2.0.2 pauses the whole assignment while a rebalance callback is pending (its
    /// "incremental rebalance" pause, so that no message of a partition being taken away is delivered first) and
    /// resumes it when the callback assigns or unassigns, like an application's resume: without waking the broker
    /// threads. With cooperative rebalancing the partitions that stay then waited up to a second for their next fetch
    /// after every group change (0.5 s stalls of every call on them, seen in the groups benchmark's scale-out).
    func wakePartitionsAfterRebalance() {
        let now = ContinuousClock.now
        let fetched = state.withLock { state -> [KafkaTopicPartition] in
            var fetched: [KafkaTopicPartition] = []
            for index in state.partitions.indices where state.partitions.values[index].isFetching {
                state.partitions.values[index].resumedAt = now
                fetched.append(state.partitions.keys[index])
            }
            return fetched
        }
        wakeFetcher(fetched, reason: .rebalanced)
    }

    /// The second wake-up of resumed partitions, one offset-store interval or more after the resume. librdkafka
    /// 2.0.2 applies a resume on its main thread and never wakes the partition's broker thread, which — when it had
    /// nothing else to fetch — sleeps up to 1 s before it looks at the partition again. ``reconcilePauses()`` wakes
    /// it right after the resume, but that request can reach the broker thread before the main thread has applied
    /// the resume (the thread then looks once more when the request's answer arrives); this one comes when the
    /// resume has long been applied, so a missed first wake-up costs at most two intervals, not a second.
    private func wakeResumedPartitionsAgain(now: ContinuousClock.Instant) {
        let interval = configuration.offsetStoreInterval
        let due = state.withLock { state -> [KafkaTopicPartition] in
            var due: [KafkaTopicPartition] = []
            for index in state.partitions.indices {
                guard let resumedAt = state.partitions.values[index].resumedAt, now - resumedAt >= interval else { continue }
                state.partitions.values[index].resumedAt = nil
                if state.partitions.values[index].isFetching { due.append(state.partitions.keys[index]) }
            }
            return due
        }
        wakeFetcher(due, reason: .resumed)
    }

    /// Hands the messages accepted so far to the delegate. Also called before a rebalance is handled, so a revoke
    /// never waits for messages the delegate has not seen.
    func deliverBatch() {
        let batch = state.withLock { state -> [KafkaMessage] in
            defer { state.pendingBatch.removeAll(keepingCapacity: true) }
            return state.pendingBatch
        }
        guard !batch.isEmpty else { return }
        delegate?.consumer(self, didReceive: batch)
        if state.withLock({ $0.reconcileNeeded }) { reconcilePauses() }
    }

    /// At most this many polled messages are accepted under one state lock.
    static let acceptChunk = 16

    /// Tracks polled messages and queues them for the delegate, unless a message's partition is gone, it is a
    /// duplicate, or its partition waits for a held message (then it is held behind that one).
    /// - Returns: whether back-pressure now wants a pause, and how many messages the next chunk may hold (1 ...
    ///   ``acceptChunk``): no more than any fetching partition or the global limit still admits.
    private func accept(_ messages: [KafkaMessage]) -> (pauseWanted: Bool, room: Int) {
        let limits = configuration.backPressure
        var pauseWanted = false
        var firsts: [Int] = []
        let room = state.withLock { state -> Int in
            guard state.phase == .running else { return 1 }
            var last: PartitionLookup?
            for position in messages.indices {
                var message = messages[position]
                guard let index = state.partitionIndex(of: message, after: &last) else { continue }
                var first = false
                // One in-place access to the partition's entry: reading `values[index].field` copies the whole entry
                // (its tracker, held messages) each time, which was most of the poll thread's time per message.
                let verdict = Self.admit(&message, to: &state.partitions.values[index],
                                         perPartitionLimit: limits.maxInFlightPerPartition, first: &first,
                                         peak: &state.peakPartitionInFlight) { partition in
                    handle.cachedHighWatermark(of: partition)
                }
                if first { firsts.append(position) }
                guard verdict != .refused else { continue }
                state.totalInFlight += 1
                if verdict == .passesAndPausesPartition || verdict == .heldAndPausesPartition {
                    state.reconcileNeeded = true
                    pauseWanted = true
                    backPressured.store(true, ordering: .relaxed)
                }
                if state.totalInFlight >= limits.maxInFlight, !state.globallyPaused {
                    state.globallyPaused = true
                    state.reconcileNeeded = true
                    pauseWanted = true
                    backPressured.store(true, ordering: .relaxed)
                }
                if verdict == .held || verdict == .heldAndPausesPartition {
                    state.heldCount += 1
                    continue
                }
                state.pendingBatch.append(message)
            }
            let room = min(Self.acceptChunk, limits.maxInFlight - state.totalInFlight,
                           limits.maxInFlightPerPartition - state.peakPartitionInFlight)
            return max(1, room)
        }
        for position in firsts {
            let incoming = messages[position]
            guard measuredTopics.contains(incoming.topic), let timestamp = incoming.timestampMilliseconds else { continue }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            metrics.assignmentWait.observe(Double(max(0, now - timestamp)) / 1000)
        }
        return (pauseWanted, room)
    }

    private enum AdmitVerdict {
        /// Revoked partition or duplicate: dropped.
        case refused
        case passes
        case passesAndPausesPartition
        /// Kept behind the partition's held messages.
        case held
        case heldAndPausesPartition
    }

    /// Tracks `message` in its partition's `entry`, stamping its generation and high watermark, and holds it behind
    /// the partition's held messages if there are any; `first` is set when it is the partition's first record since
    /// the assignment.
    private static func admit(
        _ message: inout KafkaMessage, to entry: inout PartitionState, perPartitionLimit: Int, first: inout Bool,
        peak: inout Int, highWatermark: (KafkaTopicPartition) -> Int64?
    ) -> AdmitVerdict {
        if entry.awaitsFirstRecord {
            entry.awaitsFirstRecord = false
            first = true
        }
        guard !entry.revoked, entry.tracker.delivered(message.offset) else { return .refused }
        if entry.lastCommit == nil { entry.lastCommit = message.offset }
        message.generation = entry.generation
        if entry.highWatermarkAtAssignment == nil { entry.highWatermarkAtAssignment = highWatermark(message.topicPartition) }
        message.highWatermarkAtAssignment = entry.highWatermarkAtAssignment
        var pauses = false
        peak = max(peak, entry.tracker.inFlightCount)
        if entry.tracker.inFlightCount >= perPartitionLimit, !entry.pausedForBackPressure {
            entry.pausedForBackPressure = true
            pauses = true
        }
        if entry.holdBehindHeld(message) { return pauses ? .heldAndPausesPartition : .held }
        return pauses ? .passesAndPausesPartition : .passes
    }

    /// Whether `message` is held (handed back with ``hold(_:until:)`` and not redelivered yet).
    func isHeld(_ message: KafkaMessage) -> Bool {
        state.withLock { state in
            state.partitions[message.topicPartition]?.held.contains { $0.message.offset == message.offset } ?? false
        }
    }

    /// Holds `message` behind its partition's held messages, if it has any.
    func holdBehindHeld(_ message: KafkaMessage) -> Bool {
        state.withLock { state in
            guard let index = state.partitions.index(forKey: message.topicPartition),
                state.partitions.values[index].generation == message.generation,
                state.partitions.values[index].holdBehindHeld(message)
            else { return false }
            state.heldCount += 1
            return true
        }
    }

    /// Redelivers held messages whose due time has come.
    func deliverDueHeldMessages() {
        let now = ContinuousClock.now
        let due = state.withLock { state -> [KafkaMessage] in
            guard state.phase == .running else { return [] }
            var result: [KafkaMessage] = []
            var taken = 0
            state.forEachPartition { _, entry in
                guard !entry.revoked else { return }
                taken += Self.takeDue(from: &entry.held, at: now, into: &result)
            }
            if taken > 0 {
                state.heldCount -= taken
                state.reconcileNeeded = true
            }
            return result
        }
        guard !due.isEmpty else { return }
        delegate?.consumer(self, didReceive: due)
    }

    // MARK: - Pause and resume

    /// Brings librdkafka's paused set in line with what back-pressure and held messages want; resumes only
    /// partitions this consumer paused.
    func reconcilePauses() {
        let limits = configuration.backPressure
        let (perLow, globalLow) = State.lowWatermarks(limits)
        let (toPause, toResume, pausedCounts) = state.withLock { state in
            state.reconcileNeeded = false
            if state.globallyPaused, state.totalInFlight <= globalLow { state.globallyPaused = false }
            var toPause: [KafkaTopicPartition] = []
            var toResume: [KafkaTopicPartition] = []
            var pausedCounts: [String: Int] = [:]
            var pressed = state.globallyPaused
            var peak = 0
            let alwaysPaused = state.globallyPaused || state.commitsRefusedSince != nil
            let globallyPaused = state.globallyPaused
            state.forEachPartition { partition, entry in
                guard !entry.revoked else { return }
                let wanted = Self.reconcile(&entry, perLow: perLow, alwaysPaused: alwaysPaused,
                                            globallyPaused: globallyPaused)
                peak = max(peak, wanted.inFlight)
                pressed = pressed || wanted.pressed
                switch wanted.change {
                case .pause:
                    toPause.append(partition)
                    metrics.pauses[wanted.reason]?.increment()
                case .resume:
                    toResume.append(partition)
                case nil: break
                }
                if wanted.paused { pausedCounts[wanted.reason, default: 0] += 1 }
            }
            backPressured.store(pressed, ordering: .relaxed)
            state.peakPartitionInFlight = peak
            return (toPause, toResume, pausedCounts)
        }
        if !toPause.isEmpty { setPaused(toPause, paused: true) }
        if !toResume.isEmpty {
            setPaused(toResume, paused: false)
            // librdkafka 2.0.2 does not wake the broker threads of resumed partitions (see
            // `wakeResumedPartitionsAgain(now:)`): without this an idle broker thread fetches them up to 1 s later.
            wakeFetcher(toResume, reason: .resumed)
        }
        for (reason, gauge) in metrics.paused { gauge.set(pausedCounts[reason] ?? 0) }
    }

    /// What ``reconcile(_:perLow:alwaysPaused:globallyPaused:)`` decided for one partition: whether it is to be paused
    /// and why, whether librdkafka's pause must change, its in-flight count, and whether back-pressure still holds it.
    private struct WantedPause {
        enum Change { case pause, resume }
        var paused: Bool
        var reason: String
        var change: Change?
        var inFlight: Int
        var pressed: Bool
    }

    /// Brings one partition's back-pressure flag and librdkafka pause in line with what it wants, in place.
    /// `alwaysPaused`: every partition is to be paused (the consumer's limit, or commits refused).
    private static func reconcile(
        _ entry: inout PartitionState, perLow: Int, alwaysPaused: Bool, globallyPaused: Bool
    ) -> WantedPause {
        let inFlight = entry.tracker.inFlightCount
        if entry.pausedForBackPressure, inFlight <= perLow { entry.pausedForBackPressure = false }
        let reason = entry.pauseReason(globallyPaused: globallyPaused)
        let paused = entry.pausedForBackPressure || alwaysPaused || !entry.held.isEmpty
        var change: WantedPause.Change?
        if paused != entry.libraryPaused {
            change = paused ? .pause : .resume
            entry.resumedAt = paused ? nil : .now
            entry.libraryPaused = paused
        }
        return WantedPause(paused: paused, reason: reason, change: change, inFlight: inFlight,
                           pressed: entry.pausedForBackPressure)
    }

    func setPaused(_ partitions: [KafkaTopicPartition], paused: Bool) {
        let list = RDKafkaTopicPartitionList(capacity: partitions.count)
        for partition in partitions { list.add(partition, offset: 0) }
        let err =
            paused
            ? rd_kafka_pause_partitions(handle.pointer, list.pointer)
            : rd_kafka_resume_partitions(handle.pointer, list.pointer)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.info("pause/resume failed", metadata: [KafkaLoggingKeys.error: KafkaError.rdKafka(err).name])
        }
        for element in list.elements where element.error != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.debug(
                "pause/resume of a partition failed",
                metadata: [
                    KafkaLoggingKeys.topic: element.topicPartition.topic,
                    KafkaLoggingKeys.partition: String(element.topicPartition.partition),
                    KafkaLoggingKeys.error: KafkaError.rdKafka(element.error).name,
                ]
            )
        }
    }

    // MARK: - Offsets

    /// Moves the held messages due at `now` from the front of `held` to `due`; returns how many.
    private static func takeDue(from held: inout [HeldMessage], at now: ContinuousClock.Instant,
                                into due: inout [KafkaMessage]) -> Int {
        guard let first = held.first, first.due <= now else { return 0 }
        let count = held.partitionPoint(where: { $0.due > now })
        due.append(contentsOf: held[..<count].map(\.message))
        held.removeFirst(count)
        return count
    }

    /// Stores the committable offset of every partition whose value moved (or only of `only`, when given).
    func storeOffsets(only: Set<KafkaTopicPartition>? = nil) {
        let changes = state.withLock { state -> [(KafkaTopicPartition, Int64)] in
            var changes: [(KafkaTopicPartition, Int64)] = []
            state.forEachPartition { partition, entry in
                if let only {
                    guard only.contains(partition) else { return }
                } else if entry.revoked {
                    return
                }
                guard let offset = entry.tracker.committableOffset, offset != entry.lastStored else { return }
                entry.lastStored = offset
                changes.append((partition, offset))
            }
            return changes
        }
        guard !changes.isEmpty else { return }
        let list = RDKafkaTopicPartitionList(capacity: changes.count)
        for (partition, offset) in changes { list.add(partition, offset: offset) }
        let err = rd_kafka_offsets_store(handle.pointer, list.pointer)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.debug("offsets store failed", metadata: [KafkaLoggingKeys.error: KafkaError.rdKafka(err).name])
        }
        for element in list.elements where element.error != RD_KAFKA_RESP_ERR_NO_ERROR {
            metrics.offsetStoreFailures.increment()
            logger.debug(
                "offset store failed for a partition",
                metadata: [
                    KafkaLoggingKeys.topic: element.topicPartition.topic,
                    KafkaLoggingKeys.partition: String(element.topicPartition.partition),
                    KafkaLoggingKeys.offset: String(element.offset),
                    KafkaLoggingKeys.error: KafkaError.rdKafka(element.error).name,
                ]
            )
            state.withLock { state in
                if state.partitions[element.topicPartition]?.lastStored == element.offset {
                    state.partitions[element.topicPartition]?.lastStored = nil
                }
            }
        }
    }

    // MARK: - Events and errors

    /// The topic of an offset reset that librdkafka 2.0.2 only logs: after a fetch error (offset out of range: the
    /// records at the group's position were deleted before it read them) it moves the partition to
    /// `auto.offset.reset` and logs `OFFSET` at warning level, `[thrd:main]: <topic> [<partition>]: offset reset
    /// (at offset …) to …`, with no event or error (a reset because the group has no offset yet is logged at debug
    /// level). nil for every other log line.
    static func resetTopic(level: Int32, facility: String, message: String) -> String? {
        guard facility == "OFFSET", level <= 4, message.contains("]: offset reset") else { return nil }
        var text = Substring(message)
        if text.hasPrefix("[thrd:"), let thread = text.range(of: "]: ") { text = text[thread.upperBound...] }
        guard let bracket = text.range(of: " [") else { return nil }
        return String(text[..<bracket.lowerBound])
    }

    /// Where librdkafka's statistics JSON is parsed.
    private static let statisticsQueue = DispatchQueue(label: "callpush.kafka-statistics", qos: .utility)

    /// Serves the main queue (logs, errors, statistics) without blocking, and applies the last statistics parsed.
    func drainEvents() {
        if let statistics = parsedStatistics.withLock({ $0.take() }) {
            metrics.apply(statistics, owned: Set(assignment))
        }
        guard let queue = mainQueue.pointer else { return }
        var budget = 100
        while budget > 0, let event = RDKafkaEvent.poll(queue, timeoutMilliseconds: 0) {
            budget -= 1
            guard let event else { continue }
            switch event {
            case .log(let level, let facility, let message):
                if let topic = Self.resetTopic(level: level, facility: facility, message: message) {
                    metrics.offsetResets(topic: topic).increment()
                    logger.error("records skipped: librdkafka reset a partition's fetch position after a fetch error",
                                 metadata: [KafkaLoggingKeys.facility: facility, "kafka.reset": message])
                    continue
                }
                logger.librdkafka(level: level, facility: facility, message: message)
            case .error(let error):
                report(error)
            case .statistics(let json):
                // Parsed off this thread (Foundation's JSON: 0.8–3 ms for the 7–22 KB of an 8-partition worker, and
                // it grows with the partitions); applied at the next housekeeping, after any rebalance's `forget`.
                Self.statisticsQueue.async { [self] in
                    guard let statistics = KafkaStatistics.parse(json) else { return }
                    if let group = statistics.group { observe(group) }
                    parsedStatistics.withLock { $0 = statistics }
                }
            case .offsetCommit(let succeeded, let refusedForRebalance, let committed):
                noteCommitted(committed)
                noteCommit(succeeded: succeeded, refusedForRebalance: refusedForRebalance)
            }
        }
    }

    /// Applies librdkafka's view of the group at once (off the poll thread, so it stays current when that thread is
    /// stuck), and logs each change of its state or join state.
    private func observe(_ group: KafkaGroupStatus) {
        let previous = metrics.apply(group)
        guard previous?.joinState != group.joinState || previous?.state != group.state else { return }
        logger.info("consumer group state", metadata: [
            "kafka.group_state": group.state, "kafka.join_state": group.joinState,
            "kafka.rebalance_reason": group.rebalanceReason, "kafka.assignment_size": String(group.assignmentSize),
            "kafka.rebalances": String(group.rebalanceCount),
        ])
    }

    /// A rebalance that never reaches this member (its assignment came before the refusal's answer) must not keep
    /// intake paused: the pause lasts at most one session timeout.
    private func expireCommitRefusal(now: ContinuousClock.Instant) {
        let expired = state.withLock { state -> Bool in
            guard let since = state.commitsRefusedSince, now - since > configuration.sessionTimeout else { return false }
            state.commitsRefusedSince = nil
            return true
        }
        if expired { reconcilePauses() }
    }

    /// Records the partitions' committed offsets, those revoked included (their final commit).
    private func noteCommitted(_ committed: [(KafkaTopicPartition, Int64)]) {
        guard !committed.isEmpty else { return }
        state.withLock { state in
            for (partition, offset) in committed {
                if let last = state.partitions[partition]?.lastCommit, offset > last {
                    state.partitions[partition]?.lastCommit = offset
                }
                state.handovers.committed(partition, offset: offset)
            }
        }
    }

    /// Counts and logs partitions handed over with messages their next owner reads again.
    func report(_ handovers: [KafkaHandoverLedger.Handover]) {
        guard !handovers.isEmpty else { return }
        let messages = handovers.reduce(0) { $0 + $1.messages }
        metrics.uncommittedHandedOver.increment(by: messages)
        logger.info(
            "partitions handed over past their last commit: their next owner reads these messages again",
            metadata: [
                "kafka.partitions": Self.describe(handovers.map(\.partition)),
                KafkaLoggingKeys.uncommittedMessages: String(messages),
            ]
        )
    }

    /// With eager rebalancing, a commit refused for a rebalance pauses intake until the rebalance is done (or a commit
    /// succeeds): every partition is about to be handed over, and what finished meanwhile would be read again by its
    /// next owner. With cooperative rebalancing the partitions that stay keep going (their offsets are committed once
    /// the rebalance is done), and those that move are drained and stored at their revoke.
    private func noteCommit(succeeded: Bool, refusedForRebalance: Bool) {
        if configuration.rebalancing == .cooperative {
            if refusedForRebalance { metrics.commitsRefused.increment() }
            return
        }
        let changed = state.withLock { state -> Bool in
            let wasRefused = state.commitsRefusedSince != nil
            let refused = refusedForRebalance || (wasRefused && !succeeded)
            if refused != wasRefused { state.commitsRefusedSince = refused ? .now : nil }
            return refused != wasRefused
        }
        guard changed else { return }
        if refusedForRebalance {
            metrics.commitsRefused.increment()
            logger.info("offset commit refused: the group is rebalancing; intake paused until it is done")
        }
        reconcilePauses()
    }

    private func handleConsumerError(_ err: rd_kafka_resp_err_t) {
        if err == RD_KAFKA_RESP_ERR__PARTITION_EOF { return }
        if err == RD_KAFKA_RESP_ERR__FATAL, let fatal = handle.fatalError() {
            report(fatal)
            return
        }
        report(KafkaError.rdKafka(err))
    }

    func report(_ error: KafkaError) {
        logger.info("kafka consumer error", metadata: [KafkaLoggingKeys.error: error.description])
        if error.isFatal || error.code == .fatal {
            let fatal = handle.fatalError() ?? error
            delegate?.consumer(self, didFail: fatal)
        } else {
            delegate?.consumer(self, didFail: error)
        }
    }

    // MARK: - Shutdown

    private func closeGracefully() {
        // Stop intake (dispatch drops messages once the phase is not running), then drain with a bound.
        let deadline = ContinuousClock.now + configuration.closeDrainTimeout
        while ContinuousClock.now < deadline {
            let busy = state.withLock { state in
                state.partitions.values.contains { $0.tracker.inFlightCount > $0.held.count + $0.givenBack && !$0.revoked }
            }
            if !busy { break }
            storeOffsets()
            drainEvents()
            pollOnce(timeout: 10)
        }
        storeOffsets()
        // Leaves the group; the revoke callback stores final offsets and auto-commit commits them.
        let err = rd_kafka_consumer_close(handle.pointer)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.info("consumer close failed", metadata: [KafkaLoggingKeys.error: KafkaError.rdKafka(err).name])
        }
        drainEvents()
    }

    private func finish(destroyFlags: Int32) {
        report(state.withLock { state in
            // Abandoned: what is still owned goes to its next owner as it stands.
            for (partition, entry) in state.partitions {
                state.handovers.revoked(partition, committed: entry.lastCommit, highestRead: entry.highestRead)
            }
            return state.handovers.resolve()
        })
        let revoked = state.withLock { state -> [KafkaTopicPartition] in
            let partitions = Array(state.partitions.keys)
            state.partitions.removeAll()
            state.totalInFlight = 0
            state.heldCount = 0
            mainQueue.destroy()
            consumerQueue.destroy()
            return partitions
        }
        metrics.forget(revoked)
        metrics.setAssigned([])
        handle.destroy(flags: destroyFlags)
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.phase = .finished
            defer { state.closeWaiters.removeAll() }
            return Array(state.closeWaiters.values)
        }
        delegateBox.withLock { $0 = nil }
        for waiter in waiters { waiter.resume() }
    }
}
