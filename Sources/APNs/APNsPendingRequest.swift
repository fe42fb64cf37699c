import Runtime
import HTTP2

/// One push travelling through a pool: the caller's push (its request, and where its answer goes), the route of the app
/// it was admitted for (when an ``APNsAppRouter`` sent it) and its deadline; ``answer(_:)`` ends it. An immutable
/// object: queues, batches and the stream's completion share it without copying the request (a retain instead of one
/// per string and array inside); a re-send queues a new one with its counters raised (``resent()``,
/// ``authRetriedCopy()``).
final class APNsPendingRequest: Sendable {
    let push: any APNsPush
    /// `push.request`, read once.
    let request: APNsRequest
    let route: APNsAppRouter.Route?
    let startNanoseconds: UInt64
    let deadline: HTTP2Deadline
    /// Re-sent once after an auth answer (ExpiredProviderToken, TooManyProviderTokenUpdates).
    let authRetried: Bool
    /// Re-sent after the server did not process it.
    let resends: Int

    init(_ push: any APNsPush, route: APNsAppRouter.Route?, timeout: Duration) {
        self.push = push
        request = push.request
        self.route = route
        let now = HTTP2Deadline.now()
        startNanoseconds = now.uptimeNanoseconds
        deadline = now + timeout
        authRetried = false
        resends = 0
    }

    private init(_ other: APNsPendingRequest, authRetried: Bool, resends: Int) {
        push = other.push
        request = other.request
        route = other.route
        startNanoseconds = other.startNanoseconds
        deadline = other.deadline
        self.authRetried = authRetried
        self.resends = resends
    }

    /// The same push, marked as re-sent once after an auth answer.
    func authRetriedCopy() -> APNsPendingRequest { APNsPendingRequest(self, authRetried: true, resends: resends) }

    /// The same push, with one more transparent re-send counted.
    func resent() -> APNsPendingRequest { APNsPendingRequest(self, authRetried: authRetried, resends: resends + 1) }

    /// Ends the push with `result`: the route's series, the push's answer, then the route's in-flight count.
    func answer(_ result: consuming APNsResult) {
        route?.willAnswer(result)
        push.answered(result)
        route?.didAnswer()
    }

    /// Seconds since `send`.
    var elapsedSeconds: Double {
        Double(HTTP2Deadline.now().uptimeNanoseconds &- startNanoseconds) / 1e9
    }
}
