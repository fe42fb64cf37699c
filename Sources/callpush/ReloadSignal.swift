import Dispatch
@preconcurrency import Glibc
import Synchronization

/// SIGHUP for `callpush run`: each signal calls `handler` on a serial queue (one reload at a time, in order).
final class ReloadSignal: Sendable {
    /// Behind a lock only because Dispatch sources are not `Sendable`.
    private let source: Mutex<any DispatchSourceSignal>

    init(signal number: Int32 = SIGHUP, handler: @escaping @Sendable () -> Void) {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "callpush.reload"))
        source.setEventHandler(handler: handler)
        source.resume()
        self.source = Mutex(source)
    }

    /// Stops handling the signal (it is ignored from now on).
    func cancel() { source.withLock { $0.cancel() } }
}
