/// Settings of one `HTTP2ClientConnection`.
public struct HTTP2ClientConfiguration: Sendable {
    /// Local cap on concurrent streams; the effective limit is `min(this, peer's SETTINGS_MAX_CONCURRENT_STREAMS)`.
    /// Default: `1000`.
    public var maxConcurrentStreams: Int
    /// Requests waiting locally for a free stream beyond this are failed at once with `notProcessed`.
    /// Default: `100_000`.
    var maxQueuedRequests: Int
    /// SETTINGS_INITIAL_WINDOW_SIZE we advertise, and the connection receive window.
    /// Default: `1 << 20` (1 MiB).
    var initialWindowSize: Int
    /// TCP connect + TLS handshake + first SETTINGS must finish within this.
    /// Default: 10 s.
    public var connectTimeout: Duration
    /// Send a PING after this long without receiving anything; `nil` disables keep-alive PINGs.
    /// Default: 60 s.
    public var pingInterval: Duration?
    /// A PING not acknowledged within this closes the connection with `pingTimeout`.
    /// Default: 5 s.
    var pingTimeout: Duration
    /// Deadline applied to requests submitted without one; `nil` means no deadline.
    /// Default: `nil`.
    var defaultRequestTimeout: Duration?
    /// How often deadlines are checked (their resolution).
    /// Default: 10 ms.
    public var deadlineCheckInterval: Duration

    public init(
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

