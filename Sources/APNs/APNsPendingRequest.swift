import HTTP2

/// One push travelling through a pool: the request, its precomputed headers, its completion and its deadline. A
/// value: a re-send queues a copy with its counters raised.
struct APNsPendingRequest: Sendable {
    let request: APNsRequest
    /// Regular header fields (no pseudo-headers, no `authorization`).
    let headers: [HTTP2Header]
    let completion: @Sendable (APNsResult) -> Void
    let startNanoseconds: UInt64
    let deadline: HTTP2Deadline
    /// Re-sent once after an auth answer (ExpiredProviderToken, TooManyProviderTokenUpdates).
    var authRetried = false
    /// Re-sent after the server did not process it.
    var resends = 0

    init(request: APNsRequest, completion: @escaping @Sendable (APNsResult) -> Void, timeout: Duration) {
        self.request = request
        var headers: [HTTP2Header] = []
        headers.reserveCapacity(10)
        for field in request.headerFields(authority: "", bearerToken: nil) where !field.name.hasPrefix(":") {
            headers.append(HTTP2Header(field.name, field.value, neverIndex: field.neverIndex))
        }
        self.headers = headers
        self.completion = completion
        let now = HTTP2Deadline.now()
        startNanoseconds = now.uptimeNanoseconds
        deadline = now + timeout
    }

    /// Seconds since `send`.
    var elapsedSeconds: Double {
        Double(HTTP2Deadline.now().uptimeNanoseconds &- startNanoseconds) / 1e9
    }
}

/// A FIFO of pending requests with cheap push-front (for re-sends, which keep their place ahead of newer pushes).
struct APNsRequestQueue {
    private var items: [APNsPendingRequest?] = []
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }
    var first: APNsPendingRequest? { isEmpty ? nil : items[head] }

    mutating func append(_ item: APNsPendingRequest) { items.append(item) }

    mutating func prepend(_ item: APNsPendingRequest) {
        if head > 0 {
            head -= 1
            items[head] = item
        } else {
            items.insert(item, at: 0)
        }
    }

    mutating func popFirst() -> APNsPendingRequest? {
        guard head < items.count else { return nil }
        let item = items[head]
        items[head] = nil
        head += 1
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    mutating func removeAll() -> [APNsPendingRequest] {
        let all = items[head...].compactMap { $0 }
        items = []
        head = 0
        return all
    }
}
