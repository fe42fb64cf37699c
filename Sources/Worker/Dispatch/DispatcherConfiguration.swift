/// Everything the dispatcher decides with; each part documents its own defaults.
package struct DispatcherConfiguration: Sendable {
    /// The topic call events arrive on: backlog and history scans read it, and a retry record's first hop names it.
    /// ``WorkerService`` sets it from ``WorkerConfiguration/callsTopic``. Default: "calls".
    var callsTopic = "calls"
    /// Event size and field limits. Default: ``CallEventDecoder/Configuration/init()``.
    var decoder = CallEventDecoder.Configuration()
    /// Event → APNs request mapping. Default: ``MappingConfiguration/init()``.
    package var mapping = MappingConfiguration()
    /// Topics, retry tiers and receipts. Default: ``RoutingConfiguration/init()``.
    package var routing = RoutingConfiguration()
    /// Memory of ended calls. Default: ``CallMemoryConfiguration/init()``.
    package var calls = CallMemoryConfiguration()
    /// Reading ahead through a newly assigned partition's backlog before ringing. Default:
    /// ``ReadAheadConfiguration/init()`` (``WorkerService`` keeps its bounds below the consumer's in-flight limits).
    var readAhead = ReadAheadConfiguration()
    /// First wait before re-producing a record whose delivery failed; doubles up to ``produceRetryMaximum``.
    /// Default: 0.1 s.
    package var produceRetryInitial: Duration = .milliseconds(100)
    /// Longest wait between produce attempts. Default: 5 s.
    var produceRetryMaximum: Duration = .seconds(5)

    init() {}
}
