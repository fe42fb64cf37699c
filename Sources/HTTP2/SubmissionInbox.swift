import Synchronization

/// Requests submitted from other threads, waiting for the loop. Submitters append under a mutex; only the append that
/// finds the inbox empty asks the loop to drain it, so a burst of cross-thread streams costs one `execute` hop
/// (and at most one wakeup) per loop turn instead of one closure per request. Order per submitting thread is kept.
/// The inbox holds the streams themselves; the loop takes them over from here.
final class SubmissionInbox: Sendable {
    private let pending = Mutex<[HTTP2ClientStream]>([])

    /// Appends `streams`; true when the caller must schedule a drain (the inbox was empty).
    func append(_ streams: [HTTP2ClientStream]) -> Bool {
        pending.withLock { items in
            let wasEmpty = items.isEmpty
            items.append(contentsOf: streams)
            return wasEmpty && !items.isEmpty
        }
    }

    /// Appends one stream; true when the caller must schedule a drain.
    func append(_ stream: HTTP2ClientStream) -> Bool {
        pending.withLock { items in
            items.append(stream)
            return items.count == 1
        }
    }

    /// Takes everything (loop thread).
    func takeAll() -> [HTTP2ClientStream] {
        pending.withLock { items in
            let taken = items
            items.removeAll(keepingCapacity: true)
            return taken
        }
    }
}
