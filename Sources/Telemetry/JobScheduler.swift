/// Runs a job once, after a delay, on a thread of the scheduler's choosing. The worker's delayed work — the
/// read-ahead's timeout, the back-off of a failed produce — runs on the event loops (`Runtime`'s `EventLoop` and
/// `EventLoopGroup` are schedulers); in tests `ManualWallClock` (TestSupport) is one, whose jobs run when it is
/// advanced past their time, so no test sleeps for them.
package protocol JobScheduler: Sendable {
    /// Runs `job` once `delay` has passed. Thread-safe.
    func execute(after delay: Duration, _ job: @escaping @Sendable () -> Void)
}
