import Runtime
import HTTP2

/// One push travelling through a pool: the request, its completion and its deadline. An immutable object: queues,
/// batches and the stream's completion share it without copying the request (a retain instead of one per string and
/// array inside); a re-send queues a new one with its counters raised (``resent()``, ``authRetriedCopy()``).
final class APNsPendingRequest: Sendable {
    let request: APNsRequest
    let completion: @Sendable (APNsResult) -> Void
    let startNanoseconds: UInt64
    let deadline: HTTP2Deadline
    /// Re-sent once after an auth answer (ExpiredProviderToken, TooManyProviderTokenUpdates).
    let authRetried: Bool
    /// Re-sent after the server did not process it.
    let resends: Int

    init(request: APNsRequest, completion: @escaping @Sendable (APNsResult) -> Void, timeout: Duration) {
        self.request = request
        self.completion = completion
        let now = HTTP2Deadline.now()
        startNanoseconds = now.uptimeNanoseconds
        deadline = now + timeout
        authRetried = false
        resends = 0
    }

    private init(_ other: APNsPendingRequest, authRetried: Bool, resends: Int) {
        request = other.request
        completion = other.completion
        startNanoseconds = other.startNanoseconds
        deadline = other.deadline
        self.authRetried = authRetried
        self.resends = resends
    }

    /// The same push, marked as re-sent once after an auth answer.
    func authRetriedCopy() -> APNsPendingRequest { APNsPendingRequest(self, authRetried: true, resends: resends) }

    /// The same push, with one more transparent re-send counted.
    func resent() -> APNsPendingRequest { APNsPendingRequest(self, authRetried: authRetried, resends: resends + 1) }

    /// Seconds since `send`.
    var elapsedSeconds: Double {
        Double(HTTP2Deadline.now().uptimeNanoseconds &- startNanoseconds) / 1e9
    }
}
