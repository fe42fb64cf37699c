/// An event as the ``CallTracker`` sees it: its call, its type, and when its call stops ringing. The dispatcher's
/// in-flight event is one, so the tracker queues and hands back the very object the dispatcher keeps.
protocol CallTrackerItem: Sendable {
    var callKey: CallKey { get }
    var eventType: CallEventType { get }
    /// `created_at + ring_timeout_s` of the event, milliseconds since the epoch (``CallEvent/ringDeadlineMilliseconds``).
    var ringDeadlineMilliseconds: Int64 { get }
}
