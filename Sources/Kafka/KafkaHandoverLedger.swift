/// Counts what a partition's next owner reads again: the messages this consumer read from a partition it gave away,
/// past the partition's last commit that succeeded. The next owner starts at that commit, so these are the
/// at-least-once repeats a rebalance causes. A revoked partition waits here until the next assignment (eager
/// rebalancing: it may come back to this member, which then resumes where it finished and reads again only what lies
/// above that) or the consumer's end; meanwhile the outcome of the final commit librdkafka makes on revoke moves
/// its start.
///
/// On a real broker that final commit normally succeeds and only messages still unfinished at the revoke count;
/// librdkafka's mock broker refuses every commit from a member's join until the group has a leader, so there a
/// partition that moves repeats everything read since its last commit before the join.
struct KafkaHandoverLedger: Sendable {
    /// A revoked partition not yet assigned again.
    struct Pending: Sendable {
        /// Where the next owner starts unless a later commit succeeds: the last commit that succeeded, or where this
        /// member's reading began.
        var committed: Int64
        /// The highest offset read + 1.
        let end: Int64

        var messages: Int { Int(max(0, end - committed)) }
    }

    /// A partition given away and how many of its messages its next owner reads again (> 0 only).
    struct Handover: Sendable {
        let partition: KafkaTopicPartition
        let messages: Int
    }

    private(set) var pending: [KafkaTopicPartition: Pending] = [:]

    /// `partition` was revoked; `committed` as in ``Pending/committed``, `highestRead` the highest offset read (either
    /// nil: nothing was read).
    mutating func revoked(_ partition: KafkaTopicPartition, committed: Int64?, highestRead: Int64?) {
        guard let committed, let highestRead else { return }
        pending[partition] = Pending(committed: committed, end: highestRead + 1)
    }

    /// A commit of `partition` up to `offset` succeeded.
    mutating func committed(_ partition: KafkaTopicPartition, offset: Int64) {
        if let entry = pending[partition], offset > entry.committed { pending[partition]?.committed = offset }
    }

    /// The next assignment: `partitions`, of which `resuming` continue where this member finished (nobody else read
    /// them): counted are only the messages it reads again from there (finished out of order above it, or given
    /// back). Every other pending partition went to another member, or starts again at the group's committed offset:
    /// counted whole.
    /// Returns the resumed partitions' pending entries, to carry into the new ownership, and the hand-overs.
    mutating func assigned(
        _ partitions: [KafkaTopicPartition], resuming: [KafkaTopicPartition: Int64]
    ) -> (carried: [KafkaTopicPartition: Pending], handovers: [Handover]) {
        var carried: [KafkaTopicPartition: Pending] = [:]
        var handovers: [Handover] = []
        for partition in partitions {
            guard let offset = resuming[partition], let entry = pending.removeValue(forKey: partition) else { continue }
            carried[partition] = entry
            let again = Pending(committed: offset, end: entry.end).messages
            if again > 0 { handovers.append(Handover(partition: partition, messages: again)) }
        }
        return (carried, handovers + resolve())
    }

    /// Counts every pending partition (the consumer ends, or after an assignment).
    mutating func resolve() -> [Handover] {
        defer { pending.removeAll() }
        return pending.compactMap { partition, entry in
            entry.messages > 0 ? Handover(partition: partition, messages: entry.messages) : nil
        }
    }
}
