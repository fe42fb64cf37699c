internal import Runtime

/// One request from submission to completion (loop-thread only).
final class ClientStream {
    var request: HTTP2Request?
    let deadline: UInt64
    let completion: HTTP2ClientConnection.Completion
    var streamID: Int32 = 0
    /// Index in `ActiveStreams` while on the wire, else -1.
    var slot = -1
    var body: [UInt8] = []
    var bodyOffset = 0
    var status = 0
    var headers = HTTP2RawHeaderBlock()
    var responseBody: [UInt8] = []
    /// Bytes of response header fields and body received so far.
    var responseBytes = 0

    /// A stream for `submission`; no deadline is `UInt64.max`.
    init(_ submission: HTTP2Submission) {
        request = submission.request
        deadline = submission.deadline?.uptimeNanoseconds ?? UInt64.max
        completion = submission.completion
    }
}

/// An outstanding PING.
struct PingWaiter {
    let sentAt: UInt64
    let timer: EventLoopTimer
    let completion: (@Sendable (Result<Duration, HTTP2Error>) -> Void)?
}
