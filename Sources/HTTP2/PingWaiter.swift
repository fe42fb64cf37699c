internal import Runtime

/// An outstanding PING.
struct PingWaiter {
    let sentAt: UInt64
    let timer: EventLoopTimer
    let completion: (@Sendable (Result<Duration, HTTP2Error>) -> Void)?
}
