import Foundation

/// The consumer group as librdkafka's group handler sees this member: the `cgrp` object of its statistics JSON.
///
/// It tells what callpush's own series cannot: whether librdkafka is still joining or syncing (a rebalance that does
/// not finish stays in a join state other than `steady`), and how many partitions the group gave this member whether
/// or not the poll thread has applied them yet.
struct KafkaGroupStatus: Equatable, Sendable {
    /// `state`: the coordinator connection (`up` once the coordinator is known and connected).
    var state: String
    /// `join_state`: `init`, `wait-join`, `wait-sync`, `wait-assign-call`, `wait-unassign-call`,
    /// `wait-unassign-to-complete`, `wait-incr-unassign-to-complete` or `steady`.
    var joinState: String
    /// `rebalance_age`: time since this member's last rebalance.
    var rebalanceAge: Duration
    /// `rebalance_cnt`: rebalances (assignments and revocations) since the handle was created.
    var rebalanceCount: Int64
    /// `rebalance_reason`: why the last one happened.
    var rebalanceReason: String
    /// `assignment_size`: partitions of the subscribed topics the group gave this member at its last sync (companion
    /// topics, assigned by callpush, are not counted).
    var assignmentSize: Int64

    /// The `cgrp` object, or nil when it lacks a state or join state (a producer's statistics have none).
    init?(_ object: [String: Any]) {
        guard let state = object["state"] as? String, let joinState = object["join_state"] as? String else { return nil }
        self.state = state
        self.joinState = joinState
        rebalanceAge = .milliseconds(KafkaStatistics.int(object["rebalance_age"]) ?? 0)
        rebalanceCount = KafkaStatistics.int(object["rebalance_cnt"]) ?? 0
        rebalanceReason = object["rebalance_reason"] as? String ?? ""
        assignmentSize = KafkaStatistics.int(object["assignment_size"]) ?? 0
    }
}
