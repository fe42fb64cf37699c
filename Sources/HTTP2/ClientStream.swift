internal import Runtime

/// One request from submission to completion (loop-thread only).
final class ClientStream {
    /// The request and its completion, kept whole until the stream ends (nghttp2 reads the body from it as it sends):
    /// taking them apart would copy each of the request's strings and arrays.
    let submission: HTTP2Submission
    let deadline: UInt64
    var streamID: Int32 = 0
    /// Index in `ActiveStreams` while on the wire, else -1.
    var slot = -1
    /// Bytes of the request body nghttp2 has taken so far.
    var bodyOffset = 0
    var status = 0
    var headers = HTTP2RawHeaderBlock()
    var responseBody: [UInt8] = []
    /// Bytes of response header fields and body received so far.
    var responseBytes = 0

    /// A stream for `submission`; no deadline is `UInt64.max`.
    init(_ submission: HTTP2Submission) {
        deadline = submission.deadline?.uptimeNanoseconds ?? UInt64.max
        self.submission = submission
    }

    var completion: HTTP2ClientConnection.Completion { submission.completion }
}

/// An outstanding PING.
struct PingWaiter {
    let sentAt: UInt64
    let timer: EventLoopTimer
    let completion: (@Sendable (Result<Duration, HTTP2Error>) -> Void)?
}
