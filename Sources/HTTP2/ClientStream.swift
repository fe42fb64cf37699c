/// One request from submission to completion (loop-thread only).
final class ClientStream {
    var request: HTTP2Request?
    let deadline: UInt64
    let completion: HTTP2ClientConnection.Completion
    var streamID: Int32 = 0
    /// Index in `ActiveStreams` while on the wire, else -1.
    var slot = -1
    var body: [UInt8] = []
    var bodyOffset = 0
    var status = 0
    var headers = HTTP2RawHeaderBlock()
    var responseBody: [UInt8] = []
    /// Bytes of response header fields and body received so far.
    var responseBytes = 0

    /// A stream for `submission`; no deadline is `UInt64.max`.
    init(_ submission: HTTP2Submission) {
        request = submission.request
        deadline = submission.deadline?.uptimeNanoseconds ?? UInt64.max
        completion = submission.completion
    }
}

/// A FIFO of queued requests: an array with a moving head, compacted when the dead prefix is large.
struct PendingQueue {
    private var items: [ClientStream] = []
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head >= items.count }

    mutating func append(_ stream: ClientStream) { items.append(stream) }

    mutating func popFirst() -> ClientStream? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    /// Removes and returns every element matching `predicate`, keeping the order of the rest. Deadlines mostly pass in
    /// queue order: a matching prefix is taken by moving the head, and the rest is copied only when a later element
    /// matches too (a queue of thousands during an APNs outage was copied at every sweep).
    mutating func removeAll(where predicate: (ClientStream) -> Bool) -> [ClientStream] {
        var removed: [ClientStream] = []
        while head < items.count, predicate(items[head]) {
            removed.append(items[head])
            head += 1
        }
        if let first = items[head...].firstIndex(where: predicate) {
            var kept: [ClientStream] = Array(items[head..<first])
            kept.reserveCapacity(items.count - head)
            for index in first..<items.count {
                if predicate(items[index]) { removed.append(items[index]) } else { kept.append(items[index]) }
            }
            items = kept
            head = 0
        } else if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return removed
    }

    func forEach(_ body: (ClientStream) -> Void) {
        for index in head..<items.count { body(items[index]) }
    }

    mutating func takeAll() -> [ClientStream] {
        let all = Array(items[head...])
        items = []
        head = 0
        return all
    }
}

/// An outstanding PING.
struct PingWaiter {
    let sentAt: UInt64
    let timer: EventLoopTimer
    let completion: (@Sendable (Result<Duration, HTTP2Error>) -> Void)?
}
