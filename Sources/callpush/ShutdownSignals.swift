import Dispatch
@preconcurrency import Glibc
import Synchronization

/// SIGINT/SIGTERM handling for long-running commands: the first signal starts a graceful shutdown, a second one
/// exits at once.
final class ShutdownSignals: Sendable {
    /// Kept alive for the life of the object.
    private let sources: [SignalSource]
    private let received = Atomic<Int>(0)
    private let continuation = Mutex<CheckedContinuation<Int32, Never>?>(nil)
    private let firstSignal = Atomic<Int32>(0)

    init(signals: [Int32] = [SIGINT, SIGTERM]) {
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = sources.map(SignalSource.init)
        for (number, source) in zip(signals, sources) {
            source.setEventHandler { [self] in self.handle(number) }
            source.resume()
        }
    }

    private func handle(_ number: Int32) {
        if received.add(1, ordering: .relaxed).newValue > 1 {
            CommandLineTool.printError("second signal: exiting now")
            _exit(130)
        }
        firstSignal.store(number, ordering: .relaxed)
        continuation.withLock { $0?.resume(returning: number); $0 = nil }
    }

    /// Suspends until the first signal and returns its number.
    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let already = firstSignal.load(ordering: .relaxed)
            if already != 0 {
                continuation.resume(returning: already)
            } else {
                self.continuation.withLock { $0 = continuation }
            }
        }
    }

    /// Suspends until a signal arrives or `duration` passes; true when a signal arrived.
    func wait(upTo duration: Duration) async -> Bool {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if firstSignal.load(ordering: .relaxed) != 0 { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return firstSignal.load(ordering: .relaxed) != 0
    }

    var signalled: Bool { firstSignal.load(ordering: .relaxed) != 0 }
}

/// A dispatch signal source. `@unchecked Sendable`: DispatchSource objects are thread-safe; this one is only
/// created, resumed and kept alive.
private struct SignalSource: @unchecked Sendable {
    let source: any DispatchSourceSignal
}
