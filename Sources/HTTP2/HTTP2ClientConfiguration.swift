/// Settings of one `HTTP2ClientConnection`.
package struct HTTP2ClientConfiguration: Sendable {
    /// Local cap on concurrent streams; the effective limit is `min(this, peer's SETTINGS_MAX_CONCURRENT_STREAMS)`.
    /// Default: `1000`.
    package var maxConcurrentStreams: Int
    /// Requests waiting locally for a free stream beyond this are failed at once with `notProcessed`.
    /// Default: `100_000`.
    var maxQueuedRequests: Int
    /// SETTINGS_INITIAL_WINDOW_SIZE we advertise, and the connection receive window.
    /// Default: `1 << 20` (1 MiB).
    var initialWindowSize: Int
    /// TCP connect + TLS handshake + first SETTINGS must finish within this.
    /// Default: 10 s.
    package var connectTimeout: Duration
    /// Send a PING after this long without receiving anything; `nil` disables keep-alive PINGs.
    /// Default: 60 s.
    package var pingInterval: Duration?
    /// A PING not acknowledged within this closes the connection with `pingTimeout`.
    /// Default: 5 s.
    var pingTimeout: Duration
    /// Deadline applied to requests submitted without one; `nil` means no deadline.
    /// Default: `nil`.
    var defaultRequestTimeout: Duration?
    /// How often deadlines are checked (their resolution).
    /// Default: 10 ms.
    package var deadlineCheckInterval: Duration
    /// A connection retires once it has opened a stream with an id at or above this: it opens no more (queued
    /// requests fail with `notProcessed`, safe to send elsewhere), sends GOAWAY, lets its open streams finish and
    /// closes. A client has 2³⁰ odd stream ids; at tens of thousands of requests a second one connection uses them up
    /// in hours, and nghttp2 then refuses every new stream. Default: 2³¹ − 2²¹ (about a million ids left).
    package var retirementStreamID: Int32 = Int32.max - (1 << 21)
    /// The largest response accepted on one stream, header fields and body together; it is also advertised as
    /// SETTINGS_MAX_HEADER_LIST_SIZE. A peer that sends more is broken or hostile: the connection closes with
    /// `protocolError` and its requests fail as a lost connection. Default: 16 MiB (the APNs client sets far less).
    package var maximumResponseSize = 16 << 20
    /// The first stream id the connection uses (tests start near ``retirementStreamID``). Default: 1.
    package var firstStreamID: Int32 = 1

    package init(
        maxConcurrentStreams: Int = 1000,
        maxQueuedRequests: Int = 100_000,
        initialWindowSize: Int = 1 << 20,
        connectTimeout: Duration = .seconds(10),
        pingInterval: Duration? = .seconds(60),
        pingTimeout: Duration = .seconds(5),
        defaultRequestTimeout: Duration? = nil,
        deadlineCheckInterval: Duration = .milliseconds(10)
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxQueuedRequests = maxQueuedRequests
        self.initialWindowSize = initialWindowSize
        self.connectTimeout = connectTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.defaultRequestTimeout = defaultRequestTimeout
        self.deadlineCheckInterval = deadlineCheckInterval
    }
}

