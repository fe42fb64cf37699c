/// Settings of an `HTTP2Server`.
package struct HTTP2ServerConfiguration: Sendable {
    /// Address to bind.
    /// Default: `"127.0.0.1"`.
    package var host: String
    /// Port to bind; `0` picks an ephemeral port (see `HTTP2Server.port`).
    /// Default: `0`.
    package var port: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS sent to each new connection (change live with `setMaxConcurrentStreams`).
    /// Default: `1000`.
    package var maxConcurrentStreams: Int
    /// SETTINGS_INITIAL_WINDOW_SIZE, and the connection receive window.
    /// Default: `1 << 20`.
    var initialWindowSize: Int
    /// Send GOAWAY on a connection once it has received this many requests (last-stream-id = that request's
    /// stream); `nil` disables.
    /// Default: `nil`.
    package var goAwayAfterStreams: Int?
    /// Debug data carried by automatic GOAWAY frames.
    /// Default: `""`.
    var goAwayDebugData: String
    /// `listen(2)` backlog.
    /// Default: `1024`.
    var backlog: Int32

    package init(
        host: String = "127.0.0.1",
        port: Int = 0,
        maxConcurrentStreams: Int = 1000,
        initialWindowSize: Int = 1 << 20,
        goAwayAfterStreams: Int? = nil,
        goAwayDebugData: String = "",
        backlog: Int32 = 1024
    ) {
        self.host = host
        self.port = port
        self.maxConcurrentStreams = maxConcurrentStreams
        self.initialWindowSize = initialWindowSize
        self.goAwayAfterStreams = goAwayAfterStreams
        self.goAwayDebugData = goAwayDebugData
        self.backlog = backlog
    }
}

