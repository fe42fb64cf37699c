import Kafka

/// A ``RecordSettlement`` whose outcomes are settled on the home thread (the one that hands the dispatcher its
/// batches), a turn's worth at a time: an event's `done` then only marks it, and the dispatcher's next
/// ``Dispatcher/releaseFinished()`` passes the records of every event done since to ``done(contentsOf:)`` — one
/// consumer lock for all of them instead of one per event from whichever thread finished it.
protocol HomeThreadSettlement: RecordSettlement {
    /// The records whose events reached their outcome since the last turn (home thread).
    func done(contentsOf records: [KafkaMessage])
    /// An event is done and waits for the home thread's next turn, which may be far off (from any thread, at most
    /// once per turn): wake the home thread if something waits for the completion.
    func completionsWaiting()
}
