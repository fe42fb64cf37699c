import Dispatch
import Synchronization

/// A repeating Dispatch timer that can be cancelled from any thread. (HTTP2's loop timers, `EventLoop.schedule`,
/// are internal to that module, so the pool keeps its own.)
final class APNsMaintenanceTimer: Sendable {
    /// Dispatch sources are thread-safe objects the overlay does not mark `Sendable`.
    private struct Source: @unchecked Sendable { let timer: any DispatchSourceTimer }
    private let source = Mutex<Source?>(nil)
    private static let queue = DispatchQueue(label: "callpush.apns.pool-maintenance")

    func start(interval: Duration, _ body: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: Self.queue)
        let nanoseconds = max(1_000_000, Int(interval.components.seconds) * 1_000_000_000
            + Int(interval.components.attoseconds / 1_000_000_000))
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                       leeway: .milliseconds(5))
        timer.setEventHandler(handler: body)
        let box = Source(timer: timer)
        source.withLock { $0 = box }
        timer.resume()
    }

    func cancel() {
        let box = source.withLock { source -> Source? in
            defer { source = nil }
            return source
        }
        box?.timer.cancel()
    }
}
