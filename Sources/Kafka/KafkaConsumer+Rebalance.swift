internal import CRdKafka
import Foundation
import Synchronization
import Telemetry

// Runs on the poll thread, inside rd_kafka_consumer_poll or rd_kafka_consumer_close.
//
// Eager: each callback carries the whole assignment (assign) or all of it (revoke). Cooperative: only what changes,
// and the other partitions are consumed throughout; each partition's companions (see `companionTopics`) are assigned
// and revoked with it here, in the same call.
extension KafkaConsumer {
    func rebalance(
        _ err: rd_kafka_resp_err_t,
        partitions list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
    ) {
        metrics.rebalances.increment()
        metrics.roundOverdue.set(0)
        deliverBatch()
        let partitions = withCompanions(RDKafkaTopicPartitionList.elements(of: list).map(\.topicPartition))
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            if isCooperative {
                let (now, timeout) = (ContinuousClock.now, configuration.secondRoundDeadline)
                state.withLock { $0.secondRound.assigned(now: now, bound: timeout) }
            }
            assign(partitions, list: list)
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            let lost = rd_kafka_assignment_lost(handle.pointer) != 0
            state.withLock { $0.secondRound.revoked(partitions, lost: lost) }
            revoke(partitions, lost: lost)
            unassign(partitions)
        default:
            logger.info("rebalance error", metadata: [KafkaLoggingKeys.error: KafkaError.rdKafka(err).name])
            let owned = state.withLock { state in
                state.secondRound.reset()
                return Array(state.partitions.keys)
            }
            revoke(owned, lost: true)
            unassign(owned)
        }
        wakePartitionsAfterRebalance()
    }

    /// Reports, once, a cooperative rebalance whose second round has not reached this member in time (see
    /// ``KafkaSecondRoundWatch``).
    func reportOverdueRound(now: ContinuousClock.Instant) {
        guard let givenUp = state.withLock({ $0.secondRound.overdue(now: now) }) else { return }
        metrics.roundOverdue.set(1)
        logger.error(
            "the consumer group's second rebalance round has not come: the partitions this worker gave up may have no owner",
            metadata: [
                "kafka.partitions": Self.describe(givenUp),
                "kafka.waited_s": String(Int(configuration.secondRoundDeadline.inSeconds)),
            ])
    }

    /// `partitions` and, for each of them, the same partition number of every companion topic.
    private func withCompanions(_ partitions: [KafkaTopicPartition]) -> [KafkaTopicPartition] {
        guard !companionTopics.isEmpty else { return partitions }
        return partitions + partitions.flatMap { partition in
            companionTopics.map { KafkaTopicPartition(topic: $0, partition: partition.partition) }
        }
    }

    private var isCooperative: Bool { rd_kafka_rebalance_protocol(handle.pointer).map { String(cString: $0) } == "COOPERATIVE" }

    private func assign(_ partitions: [KafkaTopicPartition], list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?) {
        // A partition this member just gave back and now gets again starts where this member had finished, not at
        // the committed offset: commits made while the group rebalanced may have been refused (librdkafka's mock
        // broker refuses every commit until the rebalance completes), and nobody owned it in between (eager). What it
        // finished above that offset (out of order) is delivered again: skipping it would hide a stop event from the
        // read-ahead, whose incoming call, given back unsent at the revoke, would then ring after its hang-up.
        let (resumed, handovers) = state.withLock { state in
            state.generation += 1
            state.commitsRefusedSince = nil
            let resumed = state.resumePoints.filter { partitions.contains($0.key) }
            state.resumePoints.removeAll()
            let (carried, handovers) = state.handovers.assigned(partitions, resuming: resumed)
            for partition in partitions {
                var entry = PartitionState(generation: state.generation)
                entry.lastCommit = carried[partition]?.committed
                if let offset = resumed[partition] { entry.resumedFrom = carried[partition].map { (offset, $0.end) } }
                state.partitions[partition] = entry
            }
            return (resumed, handovers)
        }
        report(handovers)
        let assignment = RDKafkaTopicPartitionList(capacity: partitions.count)
        for partition in partitions { assignment.add(partition, offset: resumed[partition] ?? Int64(RD_KAFKA_OFFSET_INVALID)) }
        if isCooperative {
            if let error = rd_kafka_incremental_assign(handle.pointer, assignment.pointer) {
                report(KafkaError.consuming(error))
            }
        } else {
            // Eager: librdkafka's own list when nothing resumes (as it gave it), else one with the resume offsets.
            let err = rd_kafka_assign(handle.pointer, resumed.isEmpty ? list : assignment.pointer)
            if err != RD_KAFKA_RESP_ERR_NO_ERROR {
                report(KafkaError.rdKafka(err, reason: "assign failed: \(String(cString: rd_kafka_err2str(err)))"))
            }
        }
        if !resumed.isEmpty {
            // Store the resumed positions too, so the next commit records them even if nothing new arrives.
            let positions = RDKafkaTopicPartitionList(capacity: resumed.count)
            for (partition, offset) in resumed { positions.add(partition, offset: offset) }
            _ = rd_kafka_offsets_store(handle.pointer, positions.pointer)
            state.withLock { state in
                for (partition, offset) in resumed { state.partitions[partition]?.lastStored = offset }
            }
            logger.info("resuming where this member finished before the rebalance", metadata: ["kafka.partitions": Self.describe(Array(resumed.keys))])
        }
        metrics.setAssigned(self.assignment)
        logger.info("partitions assigned", metadata: ["kafka.partitions": Self.describe(partitions)])
        delegate?.consumer(self, didAssign: partitions)
    }

    /// Stops delivery for `partitions`, tells the delegate, waits (bounded) for their in-flight messages, stores
    /// final offsets unless the assignment was lost, and resumes what we paused. Trackers are dropped.
    func revoke(_ partitions: [KafkaTopicPartition], lost: Bool) {
        let revoked = Set(partitions)
        state.withLock { state in
            for partition in partitions { state.partitions[partition]?.revoked = true }
        }
        logger.info(
            "partitions revoked",
            metadata: ["kafka.partitions": Self.describe(partitions), "kafka.lost": String(lost)]
        )
        delegate?.consumer(self, didRevoke: partitions)
        if !lost {
            let deadline = ContinuousClock.now + configuration.revokeDrainTimeout
            while ContinuousClock.now < deadline {
                let busy = state.withLock { state in
                    revoked.contains { partition in
                        guard let entry = state.partitions[partition] else { return false }
                        return entry.tracker.inFlightCount > entry.held.count + entry.givenBack
                    }
                }
                if !busy { break }
                // Completions settled on this thread's turns (see ``KafkaConsumerDelegate/consumerDidPoll(_:)``).
                delegate?.consumerDidPoll(self)
                usleep(1000)
            }
            // Completions are ignored from here on (revoked), so the stored value is final.
            storeOffsets(only: revoked)
            state.withLock { state in
                for partition in partitions {
                    guard let entry = state.partitions[partition] else { continue }
                    // Revoked again before anything was read: it resumes where it would have.
                    if let offset = entry.tracker.committableOffset ?? entry.resumedFrom?.offset {
                        state.resumePoints[partition] = offset
                    }
                }
            }
        }
        let paused = state.withLock { state -> [KafkaTopicPartition] in
            var paused: [KafkaTopicPartition] = []
            for partition in partitions {
                guard let entry = state.partitions.removeValue(forKey: partition) else { continue }
                state.handovers.revoked(partition, committed: entry.lastCommit, highestRead: entry.highestRead)
                state.totalInFlight -= entry.tracker.inFlightCount
                state.heldCount -= entry.held.count
                if entry.libraryPaused { paused.append(partition) }
            }
            return paused
        }
        if !paused.isEmpty { setPaused(paused, paused: false) }
        metrics.forget(partitions)
        metrics.setAssigned(self.assignment)
    }

    /// Gives up `partitions` (cooperative), or the whole assignment (eager).
    private func unassign(_ partitions: [KafkaTopicPartition]) {
        if isCooperative {
            let list = RDKafkaTopicPartitionList(capacity: partitions.count)
            for partition in partitions { list.add(partition, offset: Int64(RD_KAFKA_OFFSET_INVALID)) }
            if let error = rd_kafka_incremental_unassign(handle.pointer, list.pointer) {
                logger.info("unassign failed", metadata: [KafkaLoggingKeys.error: KafkaError.consuming(error).name])
            }
            return
        }
        let err = rd_kafka_assign(handle.pointer, nil)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.info("unassign failed", metadata: [KafkaLoggingKeys.error: KafkaError.rdKafka(err).name])
        }
    }

    static func describe(_ partitions: [KafkaTopicPartition]) -> String {
        partitions.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }.map(\.description)
            .joined(separator: ",")
    }
}
