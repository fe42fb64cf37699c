/// The second round a cooperative rebalance owes this member (updated in its rebalance callbacks, read at the poll
/// loop's housekeeping).
///
/// A member that gave partitions up in a round (a revoke, not lost) gets that round's assignment, and librdkafka then
/// rejoins the group so that the partitions go to their new owners: the group's next assignment, empty or not, reaches
/// this member's assign callback. Until it does, the partitions given up may be owned by nobody and their calls do not
/// ring. The watch arms at the assignment that follows such a revoke, and any later rebalance callback disarms it; it
/// is overdue `bound` after it armed.
struct KafkaSecondRoundWatch: Sendable {
    /// The partitions given up in the round being watched.
    private var givenUp: [KafkaTopicPartition] = []
    private var revokedThisRound = false
    private var due: ContinuousClock.Instant?
    private var reported = false

    /// A revoke callback: a lost assignment owes no second round (librdkafka rejoins from scratch).
    mutating func revoked(_ partitions: [KafkaTopicPartition], lost: Bool) {
        self = Self()
        guard !lost else { return }
        givenUp = partitions
        revokedThisRound = true
    }

    /// An assign callback: after a revoke it arms the watch; any other one ends the round watched before.
    mutating func assigned(now: ContinuousClock.Instant, bound: Duration) {
        guard revokedThisRound else {
            self = Self()
            return
        }
        revokedThisRound = false
        due = now + bound
    }

    /// A rebalance error: librdkafka gives everything up and rejoins from scratch.
    mutating func reset() { self = Self() }

    /// The partitions given up, the first time the round is overdue at `now`; nil otherwise.
    mutating func overdue(now: ContinuousClock.Instant) -> [KafkaTopicPartition]? {
        guard let due, !reported, now >= due else { return nil }
        reported = true
        return givenUp
    }
}
