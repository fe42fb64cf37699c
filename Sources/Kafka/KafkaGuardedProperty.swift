/// librdkafka properties that callpush's guarantees rest on: ``KafkaConsumerConfiguration`` and
/// ``KafkaProducerConfiguration`` set them, and refuse them in `additionalProperties` with the guarantee they keep.
struct KafkaGuardedProperty: Sendable {
    let name: String
    /// What breaks if it is changed, for the one line that refuses it.
    let guarantee: String

    static let consumer: [KafkaGuardedProperty] = [
        .init(name: "enable.auto.offset.store", guarantee: "an offset is stored only once its event's outcome is final (at-least-once)"),
        .init(name: "enable.auto.commit", guarantee: "the stored offsets are committed, so a restart resumes where the group left off"),
        .init(name: "partition.assignment.strategy", guarantee: "partition p of the calls topic and of every retry tier is on one worker, so a retry never rings after its hang-up"),
        .init(name: "group.protocol", guarantee: "partition p of the calls topic and of every retry tier is on one worker, so a retry never rings after its hang-up"),
        .init(name: "isolation.level", guarantee: "only committed records are read, so an aborted upstream transaction never rings"),
        .init(name: "enable.partition.eof", guarantee: "the consumer's poll loop sees records and errors only"),
        .init(name: "auto.offset.reset", guarantee: "a partition without a committed offset starts at its oldest record, so no event produced before the first worker started is skipped"),
    ]

    static let producer: [KafkaGuardedProperty] = [
        .init(name: "enable.idempotence", guarantee: "a retry, dead letter or invalidation is written once, in order, even when a produce request is retried"),
        .init(name: "acks", guarantee: "a record counts as written (and its event's offset may be stored) only when every in-sync replica has it"),
    ]

    /// One error per guarded property set in `properties`, in name order.
    static func problems(_ properties: [String: String], guarded: [KafkaGuardedProperty]) -> [KafkaError] {
        guarded.filter { properties[$0.name] != nil }.sorted { $0.name < $1.name }.map {
            .configuration("\($0.name) is set by callpush and may not be changed: \($0.guarantee)")
        }
    }
}
