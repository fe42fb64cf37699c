import APNs
import Kafka
import Synchronization

// The in-flight event: what one admitted record becomes, from the read-ahead to the offset store.
extension Dispatcher {
    /// An admitted event waiting for, or holding, its call's turn, and then its push and its HTTP/2 stream (an
    /// ``APNsPush``): one object from admission to the offset store. A class: it passes through the read-ahead, the
    /// call tracker, the APNs pool and the connection, and copying the record, event and request at every step (a
    /// retain per string and array inside) would cost more than the rest of the hand-over.
    ///
    /// `@unchecked Sendable` restates its base class's (``APNsPush``: one owner at a time); its own fields are
    /// constants and atomics.
    final class Pending: APNsPush, InFlightLedgerItem, CallTrackerItem, ReadAheadItem, @unchecked Sendable {
        let record: KafkaMessage
        let event: CallEvent
        /// ``CallEvent/callKey``: the call in the ``CallTracker``.
        let callKey: CallKey
        /// Its record was read from the calls topic, not a retry tier.
        let isCallsTopic: Bool
        /// For a retry-tier incoming call, the calls-topic offset it was first read from
        /// (``Dispatcher/historyOrigin(of:ringDeadline:now:)``); nil for the rest. Read once, before the read-ahead's lock.
        let origin: Int64?
        /// How the record leaves: its outcome, or given back (shared by its batch).
        let settlement: any RecordSettlement
        /// `settlement` when it settles outcomes on the home thread (``releaseFinished()``).
        let homeSettlement: (any HomeThreadSettlement)?
        /// Its ``InFlightLedger`` ticket.
        let ticket: UInt64
        /// When the consumer handed it over (monotonic clock, µs): the start of its dispatch stage.
        let handedOverMicroseconds: Int64
        /// The dispatcher it belongs to: its completions need nothing else (one reference to capture).
        let dispatcher: Dispatcher
        private let lookedAheadFlag = Atomic<Bool>(false)
        private let nextEnded = Atomic<Unmanaged<Pending>?>(nil)
        private let endedFlag = Atomic<Bool>(false)
        /// Done, its outcome waiting for the home thread to settle it.
        private let doneFlag = Atomic<Bool>(false)

        init(
            record: KafkaMessage, isCallsTopic: Bool, origin: Int64?, event: CallEvent, request: APNsRequest,
            settlement: any RecordSettlement, homeSettlement: (any HomeThreadSettlement)?, ticket: UInt64,
            handedOverMicroseconds: Int64, dispatcher: Dispatcher
        ) {
            // The key before the event is stored: read after, the event would be copied into the object.
            self.callKey = event.callKey
            self.record = record
            self.isCallsTopic = isCallsTopic
            self.origin = origin
            self.event = event
            self.settlement = settlement
            self.homeSettlement = homeSettlement
            self.ticket = ticket
            self.handedOverMicroseconds = handedOverMicroseconds
            self.dispatcher = dispatcher
            super.init(request, environment: event.environment)
        }

        var eventType: CallEventType { event.type }
        var ringDeadlineMilliseconds: Int64 { event.ringDeadlineMilliseconds }
        var lane: Int32 { record.partition }
        var offset: Int64 { record.offset }
        var highWatermark: Int64? { record.highWatermarkAtAssignment }
        var isIncoming: Bool { event.type == .incoming }

        /// APNs (or the transport) answered it (on the connection's loop, or on the sending thread when the client
        /// refused it at once).
        override func answered(_ result: consuming APNsResult) { dispatcher.answered(self, result) }

        /// Held by the read-ahead, or its call's stop event came later in its batch: a cancellation is the
        /// look-ahead's doing.
        var lookedAhead: Bool { lookedAheadFlag.load(ordering: .relaxed) }

        func markLookedAhead() { lookedAheadFlag.store(true, ordering: .relaxed) }

        var ledgerNext: Unmanaged<Pending>? { nextEnded.load(ordering: .relaxed) }
        func setLedgerNext(_ next: Unmanaged<Pending>?) { nextEnded.store(next, ordering: .relaxed) }
        func markLedgerEnded() -> Bool { !endedFlag.exchange(true, ordering: .relaxed) }

        /// The event's outcome is final and counted: it leaves (its offset may be stored), and is freed on the
        /// consumer's thread, which made it — and settled there too when its settlement is a home-thread one.
        func done(_ outcome: Outcome) {
            if homeSettlement != nil {
                doneFlag.store(true, ordering: .relaxed)
            } else {
                settlement.done(record, outcome)
            }
            dispatcher.leave(self, finished: true)
        }

        /// Done, and its settlement waits for the home thread (ordered by the ledger's list).
        var awaitsHomeSettlement: Bool { doneFlag.load(ordering: .relaxed) }

        /// Leaves without an outcome: the record stays unfinished for the partition's next owner.
        func giveBack() {
            dispatcher.leave(self, finished: false)
            settlement.giveBack(record)
        }

        /// The answer of this event, the call's one in flight, is final: it leaves, and the call's next event goes.
        func answerFinished(_ outcome: Outcome) {
            done(outcome)
            for release in dispatcher.tracker.complete(callKey) {
                dispatcher.act(on: release.decision, release.item)
            }
        }
    }
}
