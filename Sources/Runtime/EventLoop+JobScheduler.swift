import Telemetry

/// A loop runs delayed jobs on its thread (``EventLoop/execute(after:_:)``); a job given to a loop that has shut
/// down never runs.
extension EventLoop: JobScheduler {}

/// A group runs each delayed job on its next loop, in round-robin order.
extension EventLoopGroup: JobScheduler {
    package func execute(after delay: Duration, _ job: @escaping @Sendable () -> Void) {
        next().execute(after: delay, job)
    }
}
