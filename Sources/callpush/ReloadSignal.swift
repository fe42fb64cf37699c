import Dispatch
@preconcurrency import Glibc

/// SIGHUP for `callpush run`: each signal calls `handler` on a serial queue (one reload at a time, in order).
final class ReloadSignal: Sendable {
    private let source: SignalSourceBox

    init(signal number: Int32 = SIGHUP, handler: @escaping @Sendable () -> Void) {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "callpush.reload"))
        source.setEventHandler(handler: handler)
        source.resume()
        self.source = SignalSourceBox(source: source)
    }

    /// Stops handling the signal (it is ignored from now on).
    func cancel() { source.source.cancel() }
}

/// `@unchecked Sendable`: a DispatchSource is thread-safe; this one is only created, resumed, kept and cancelled.
private struct SignalSourceBox: @unchecked Sendable {
    let source: any DispatchSourceSignal
}
