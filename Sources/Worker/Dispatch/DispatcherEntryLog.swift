import Synchronization
import Telemetry

/// Which threads (by ``ThreadName/group(_:)``) entered the dispatcher at each ``DispatcherEntry``, while started: the
/// check behind ARCHITECTURE.md's table of them. Stopped (the default) it costs one relaxed load per entry.
final class DispatcherEntryLog: Sendable {
    private let recording = Atomic<Bool>(false)
    private let seen = Mutex<[DispatcherEntry: Set<String>]>([:])

    /// Records every entry from now on.
    func start() { recording.store(true, ordering: .relaxed) }

    /// The thread groups seen at each entry since ``start()``.
    var threads: [DispatcherEntry: Set<String>] { seen.withLock { $0 } }

    @inline(__always)
    func note(_ entry: DispatcherEntry) {
        guard recording.load(ordering: .relaxed) else { return }
        let thread = ThreadName.group(ThreadName.current)
        _ = seen.withLock { $0[entry, default: []].insert(thread) }
    }
}
