/// Where control from outside enters the ``Dispatcher`` on an event's path. ARCHITECTURE.md ("Where the dispatcher is
/// entered") names the threads each may run on; ``DispatcherEntryLog`` records the ones it does run on.
enum DispatcherEntry: String, CaseIterable, Sendable {
    /// A consumed batch (``Dispatcher/handle(_:settlement:)``).
    case batch
    /// The finished events are freed (``Dispatcher/releaseFinished()``).
    case release
    /// Partitions assigned or revoked: the read-ahead starts or gives back what it held.
    case rebalance
    /// A push's answer (from APNs, or the transport's failure).
    case answer
    /// A produced record's delivery report (or its refusal by the producer).
    case delivery
    /// A delayed job: the read-ahead's timeout, or a failed produce tried again.
    case timer
    /// A record read by a backlog or history scan.
    case scanRecord = "scan-record"
    /// A backlog or history scan ended.
    case scanEnd = "scan-end"
}
