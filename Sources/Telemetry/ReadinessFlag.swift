import Synchronization

/// Whether this process should receive traffic: the worker sets it once it has joined its consumer group
/// and clears it when it starts draining. `/readyz` answers 200 while it is set and 503 otherwise.
package final class ReadinessFlag: Sendable {
    private let ready = Atomic<Bool>(false)

    package init(ready: Bool = false) {
        self.ready.store(ready, ordering: .relaxed)
    }

    package var isReady: Bool { ready.load(ordering: .acquiring) }

    package func set(_ value: Bool) { ready.store(value, ordering: .releasing) }
}
