import Synchronization

/// A periodic task of an ``EventLoop`` (``EventLoop/scheduleRepeated(every:_:)``); cancel it from any thread. A run
/// that is already under way when `cancel()` is called finishes; none starts after it.
package final class RepeatedTask: Sendable {
    private let cancelled = Atomic<Bool>(false)

    init() {}

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    package func cancel() { cancelled.store(true, ordering: .releasing) }
}
