import Synchronization

/// Keeps finished objects until the thread that made them drops them, so their memory is freed where it was
/// allocated.
///
/// glibc's malloc serves each thread from an arena, and a block freed on another thread takes that arena's lock. Every
/// event's objects (the consumed record's bytes, the decoded event, the APNs request and its payload) are made on the
/// consumer's poll thread and used to die on the thread that finished the event (the producer's delivery thread):
/// under load the two contended on the arena lock. Finished events wait here
/// instead until the poll thread's next turn drops them (``releaseAll()``), and their blocks go back to its own cache.
///
/// Objects something else still references are freed wherever that last reference goes, as before; nothing here
/// delays an outcome, only the freeing of memory (by at most one poll turn). What it saved is in docs/performance.md,
/// "Worker CPU".
final class HomeThreadReleaser<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var closed = false
    }

    private let state = Mutex(State())
    /// Whether `items` may hold anything: lets an empty turn skip the lock.
    private let mayHoldItems = Atomic<Bool>(false)

    init() {}

    /// Keeps `item` until the home thread's next ``releaseAll()`` (from any thread); after ``close()``, drops it here.
    func keep(_ item: Item) {
        state.withLock { state in
            guard !state.closed else { return }
            state.items.append(item)
            mayHoldItems.store(true, ordering: .relaxed)
        }
    }

    /// Drops every item kept and keeps none from now on: the home thread has stopped turning (shutdown). Kept items
    /// may reference their owner, which holds this releaser: without this they would keep each other alive.
    func close() {
        _ = take(closing: true)
    }

    /// Drops every item kept so far: call on the home thread.
    func releaseAll() {
        guard mayHoldItems.load(ordering: .relaxed) else { return }
        // The returned array is the last reference to the kept items: they are freed here, on the calling thread.
        _ = take(closing: false)
    }

    private func take(closing: Bool) -> [Item] {
        state.withLock { state in
            if closing { state.closed = true }
            mayHoldItems.store(false, ordering: .relaxed)
            defer { state.items = [] }
            return state.items
        }
    }
}
