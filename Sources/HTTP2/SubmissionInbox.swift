import Synchronization

/// Requests submitted from other threads, waiting for the loop. Submitters append under a mutex; only the append that
/// finds the inbox empty asks the loop to drain it, so a burst of cross-thread submissions costs one `execute` hop
/// (and at most one wakeup) per loop turn instead of one closure per request. Order per submitting thread is kept.
/// The inbox holds the submissions themselves (values); the loop makes their streams, which never leave it.
final class SubmissionInbox: Sendable {
    private let pending = Mutex<[HTTP2Submission]>([])

    /// Appends `submissions`; true when the caller must schedule a drain (the inbox was empty).
    func append(_ submissions: [HTTP2Submission]) -> Bool {
        pending.withLock { items in
            let wasEmpty = items.isEmpty
            items.append(contentsOf: submissions)
            return wasEmpty && !items.isEmpty
        }
    }

    /// Appends one submission; true when the caller must schedule a drain.
    func append(_ submission: HTTP2Submission) -> Bool {
        pending.withLock { items in
            items.append(submission)
            return items.count == 1
        }
    }

    /// Takes everything (loop thread).
    func takeAll() -> [HTTP2Submission] {
        pending.withLock { items in
            let taken = items
            items.removeAll(keepingCapacity: true)
            return taken
        }
    }
}
