public import HTTP2
import Runtime

/// One push from its sender to its one answer: the request, the environment it goes to, and — while a pool holds it —
/// the pool's bookkeeping; on the wire it is the HTTP/2 stream itself (an ``HTTP2ClientStream``).
///
/// A caller that already keeps an object per push (the worker keeps one per consumed event) subclasses it and hands
/// that object to ``APNsClient/send(_:)-([APNsPush])`` or ``APNsAppRouter/send(_:)-([APNsPush])``: nothing is wrapped
/// or copied per push. ``answered(_:)`` runs exactly once, possibly on an event-loop thread.
///
/// - Important: `@unchecked Sendable` (from ``HTTP2ClientStream``): one owner at a time. The sender until `send`;
///   then the pool, under its lock while the push is queued; then the connection's loop while it is on the wire;
///   then the pool again on that loop when the answer comes (a re-send queues it under the pool's lock again). Each
///   hand-over goes through a lock or a loop's queue, which order the fields below.
open class APNsPush: HTTP2ClientStream, @unchecked Sendable {
    package let request: APNsRequest
    package let environment: APNsEnvironment
    /// The route of the app it was admitted for (when an ``APNsAppRouter`` sent it).
    var route: APNsAppRouter.Route?
    /// When it was sent (monotonic ns).
    var startNanoseconds: UInt64 = 0
    /// Re-sent once after an auth answer (ExpiredProviderToken, TooManyProviderTokenUpdates).
    var authRetried = false
    /// Re-sent after the server did not process it.
    var resends = 0
    /// On the wire: the pool, the connection and the provider token it went with, which its answer needs.
    var pool: APNsConnectionPool?
    var connection: APNsPooledConnection?
    var token: APNsProviderToken?

    public init(_ request: APNsRequest, environment: APNsEnvironment) {
        self.request = request
        self.environment = environment
        super.init(HTTP2Request(path: "", authority: ""))
    }

    /// APNs' answer, or a transport failure as a result (``APNsResult/transportFailure(reason:apnsID:)``). Subclasses
    /// override it.
    open func answered(_ result: consuming APNsResult) {}

    /// Sent now on `route`, to be answered within `timeoutNanoseconds`.
    func start(route: APNsAppRouter.Route?, timeoutNanoseconds: UInt64) {
        self.route = route
        startNanoseconds = HTTP2Deadline.now().uptimeNanoseconds
        let (end, overflow) = startNanoseconds.addingReportingOverflow(timeoutNanoseconds)
        deadline = HTTP2Deadline(uptimeNanoseconds: overflow ? .max : end)
    }

    /// Ends the push with `result`: the route's series, the push's answer, then the route's in-flight count.
    func answer(_ result: consuming APNsResult) {
        let route = route
        route?.willAnswer(result)
        answered(result)
        route?.didAnswer()
    }

    /// Seconds since it was sent.
    var elapsedSeconds: Double {
        Double(HTTP2Deadline.now().uptimeNanoseconds &- startNanoseconds) / 1e9
    }

    override public final var writesHeaderFields: Bool { true }

    /// The request's APNs header fields and the provider token it goes with, written straight into the connection's
    /// encoder when the stream goes on the wire (its loop thread).
    override public final func writeHeaderFields(_ writer: HTTP2HeaderWriter) {
        request.writeHeaderFields(writer, authorization: token?.authorizationValue)
    }

    /// `:path` from the device token's digits (never indexed: unique per device), written straight into the encoder.
    override public final func writePath(_ writer: HTTP2HeaderWriter) {
        let token = request.deviceToken
        writer.add(":path", valueCount: token.pathCount, indexing: .never) {
            token.writePath(to: UnsafeMutableRawBufferPointer($0))
        }
    }

    /// The HTTP/2 outcome of its stream (the connection's loop): back to the pool, which answers or re-sends it.
    override public final func completed(_ result: Result<HTTP2Response, HTTP2Error>) {
        guard let pool, let connection else {
            answer(.transportFailure(reason: .notProcessed, id: request.id))
            return
        }
        let token = token
        self.pool = nil
        self.connection = nil
        self.token = nil
        pool.completed(self, on: connection, token: token, result: result)
    }
}
