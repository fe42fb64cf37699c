import Synchronization

/// Requests submitted from other threads, waiting for the loop. Submitters append under a mutex; only the append that
/// finds the inbox empty asks the loop to drain it, so a burst of cross-thread submissions costs one `execute` hop
/// (and at most one wakeup) per loop turn instead of one closure per request. Order per submitting thread is kept.
final class SubmissionInbox: Sendable {
    private let pending = Mutex<[UnsafeTransfer<ClientStream>]>([])

    /// Appends `streams`; true when the caller must schedule a drain (the inbox was empty).
    func append(_ streams: some Sequence<ClientStream>) -> Bool {
        pending.withLock { items in
            let wasEmpty = items.isEmpty
            for stream in streams { items.append(UnsafeTransfer(stream)) }
            return wasEmpty && !items.isEmpty
        }
    }

    /// Appends one stream; true when the caller must schedule a drain.
    func append(_ stream: ClientStream) -> Bool {
        pending.withLock { items in
            items.append(UnsafeTransfer(stream))
            return items.count == 1
        }
    }

    /// Takes everything (loop thread).
    func takeAll() -> [UnsafeTransfer<ClientStream>] {
        pending.withLock { items in
            let taken = items
            items.removeAll(keepingCapacity: true)
            return taken
        }
    }
}
