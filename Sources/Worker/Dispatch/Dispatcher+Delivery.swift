import Kafka
import Synchronization

// An outcome's records to Kafka: each produced, produced again after a failure, and the outcome counted and final once
// every one is acknowledged. Reports come on the producer's thread (on the producing one when a record is refused at once).
extension Dispatcher {
    /// Produces every record of `decision` (the routing of `record`), then counts the outcome and calls `done`.
    func finish(_ decision: OutcomeRouter.Decision, of record: KafkaMessage, done: Finisher) {
        guard !decision.records.isEmpty else {
            metrics.record(outcome: decision.outcome, reason: decision.reason, retryTier: decision.retryTier)
            done(decision.outcome)
            return
        }
        let delivery = Delivery(
            source: record, decision: decision, startMicroseconds: monotonic.uptimeMicroseconds(), dispatcher: self, done: done)
        for index in decision.records.indices { produce(delivery, tag: Delivery.tag(index: index, attempt: 0)) }
    }

    /// One outcome waiting for the delivery reports of its records: the producer reports each to it, by the tag
    /// ``tag(index:attempt:)`` gave the record (no closure per record).
    private final class Delivery: KafkaDeliveryHandler {
        /// The consumed record whose outcome this is.
        let source: KafkaMessage
        let decision: OutcomeRouter.Decision
        /// When its records went to the producer (monotonic clock, µs): the start of its acknowledge stage.
        let startMicroseconds: Int64
        let dispatcher: Dispatcher
        let done: Finisher
        private let remaining: Atomic<Int>
        /// The first refusal among its records (``KafkaError/name``), if Kafka refused one for good.
        private let refusal = Mutex<String?>(nil)
        /// Whether ``refusal`` holds one: the usual outcome (none refused) is read without the lock.
        private let refused = Atomic<Bool>(false)

        init(
            source: KafkaMessage, decision: OutcomeRouter.Decision, startMicroseconds: Int64, dispatcher: Dispatcher,
            done: Finisher
        ) {
            self.source = source
            self.decision = decision
            self.startMicroseconds = startMicroseconds
            self.dispatcher = dispatcher
            self.done = done
            remaining = Atomic(decision.records.count)
        }

        /// The tag of the record at `index` of ``decision``'s records, produced for the `attempt`-th time (from 0).
        static func tag(index: Int, attempt: Int) -> Int { attempt << 8 | index }

        /// The record's index and attempt that ``tag(index:attempt:)`` made `tag` of.
        static func record(of tag: Int) -> (index: Int, attempt: Int) { (tag & 0xFF, tag >> 8) }

        func delivered(_ result: Result<KafkaDeliveryReport, KafkaError>, tag: Int) {
            let record = Self.record(of: tag)
            dispatcher.delivered(self, index: record.index, attempt: record.attempt, result)
        }

        /// Counts one acknowledged (or refused) record; true for the last one.
        func acknowledge() -> Bool { remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }

        /// Notes that Kafka refused one of its records for good: the event ends as ``Outcome/abandoned``.
        func refuse(_ code: String) {
            refusal.withLock { $0 = $0 ?? code }
            refused.store(true, ordering: .releasing)
        }

        /// The outcome once every record is acknowledged or refused (``acknowledge()`` ordered every refusal before),
        /// and its reason.
        var final: (outcome: Outcome, reason: String?) {
            guard refused.load(ordering: .acquiring) else { return (decision.outcome, decision.reason) }
            return refusal.withLock { $0 }.map { (.abandoned, $0) } ?? (decision.outcome, decision.reason)
        }
    }

    /// Produces one of `delivery`'s records (its `tag` says which, and which attempt).
    private func produce(_ delivery: Delivery, tag: Int) {
        producer.produce(delivery.decision.records[Delivery.record(of: tag).index], reportingTo: delivery, tag: tag)
    }

    /// The delivery report of `delivery`'s record `index`: acknowledged; refused for good (the event ends as
    /// ``Outcome/abandoned``); or failed, and produced again after a back-off that doubles with each `attempt`, until
    /// acknowledged, refused or stopped. The last acknowledgement counts the outcome and calls `done`.
    private func delivered(_ delivery: Delivery, index: Int, attempt: Int, _ result: Result<KafkaDeliveryReport, KafkaError>) {
        entries.note(.delivery)
        switch result {
        case .success:
            acknowledged(delivery)
        case .failure(let error) where error.refusesRecord:
            let record = delivery.decision.records[index]
            metrics.refusedRecords(topic: record.topic).increment()
            logger.error("record refused by Kafka; its event is abandoned", metadata: Self.coordinates(delivery.source, [
                "output.topic": record.topic, "output.bytes": String(record.value.count + record.headers.byteCount),
                "error": "\(error.name): \(error.reason)",
            ]))
            delivery.refuse(error.name)
            acknowledged(delivery)
        case .failure(let error):
            let topic = delivery.decision.records[index].topic
            metrics.produceFailures(topic: topic).increment()
            guard !stopped.load(ordering: .relaxed) else { return }
            logger.warning("produce failed; retrying", metadata: ["kafka.topic": topic, "error": "\(error)"])
            var delay = configuration.produceRetryInitial
            for _ in 0..<min(attempt, 32) { delay = min(delay * 2, configuration.produceRetryMaximum) }
            timers.execute(after: delay) { [self] in
                entries.note(.timer)
                produce(delivery, tag: Delivery.tag(index: index, attempt: attempt + 1))
            }
        }
    }

    /// One of `delivery`'s records is acknowledged or refused; after the last, its outcome is counted and final.
    private func acknowledged(_ delivery: Delivery) {
        guard delivery.acknowledge() else { return }
        metrics.acknowledgeStage.observe(Double(max(0, monotonic.uptimeMicroseconds() - delivery.startMicroseconds)) / 1_000_000)
        let final = delivery.final
        metrics.record(outcome: final.outcome, reason: final.reason, retryTier: delivery.decision.retryTier)
        delivery.done(final.outcome)
    }
}
