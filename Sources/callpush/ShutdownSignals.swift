import Dispatch
@preconcurrency import Glibc
import Synchronization

/// When a long-running command should stop: the first SIGINT/SIGTERM (or a ``stop(_:)`` from inside, such as a
/// fatal Kafka error) ends ``wait()``; a second signal exits at once.
final class ShutdownSignals: Sendable {
    /// Why the command stops.
    enum Reason: Equatable, Sendable {
        case signal(Int32)
        /// A component failed for good (e.g. librdkafka's fatal error): stop, and exit non-zero.
        case fatalError
    }

    private struct State {
        var reason: Reason?
        var signals = 0
        var waiters: [CheckedContinuation<Reason, Never>] = []
    }

    /// Kept alive for the life of the object (behind a lock only because Dispatch sources are not `Sendable`).
    private let sources: Mutex<[any DispatchSourceSignal]>
    private let state = Mutex(State())

    init(signals: [Int32] = [SIGINT, SIGTERM]) {
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = Mutex(sources)
        self.sources.withLock { sources in
            for (number, source) in zip(signals, sources) {
                source.setEventHandler { [self] in self.handle(number) }
                source.resume()
            }
        }
    }

    private func handle(_ number: Int32) {
        let repeated = state.withLock { state -> Bool in
            state.signals += 1
            return state.signals > 1
        }
        if repeated {
            CommandLineTool.printError("second signal: exiting now")
            _exit(130)
        }
        stop(.signal(number))
    }

    /// Ends ``wait()`` with `reason`, unless a reason came first.
    func stop(_ reason: Reason) {
        let waiters = state.withLock { state -> [CheckedContinuation<Reason, Never>] in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    /// Suspends until the first signal or ``stop(_:)`` and returns why.
    func wait() async -> Reason {
        await withCheckedContinuation { continuation in
            let reason = state.withLock { state -> Reason? in
                if state.reason == nil { state.waiters.append(continuation) }
                return state.reason
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }

    /// Suspends until a stop arrives or `duration` passes; true when a stop arrived.
    func wait(upTo duration: Duration) async -> Bool {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if signalled { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return signalled
    }

    /// Whether a stop arrived.
    var signalled: Bool { state.withLock { $0.reason != nil } }
}
