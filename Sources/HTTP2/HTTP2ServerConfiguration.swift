/// Settings of an `HTTP2Server`.
public struct HTTP2ServerConfiguration: Sendable {
    /// Address to bind.
    /// Default: `"127.0.0.1"`.
    public var host: String
    /// Port to bind; `0` picks an ephemeral port (see `HTTP2Server.port`).
    /// Default: `0`.
    public var port: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS sent to each new connection (change live with `setMaxConcurrentStreams`).
    /// Default: `1000`.
    public var maxConcurrentStreams: Int
    /// SETTINGS_INITIAL_WINDOW_SIZE, and the connection receive window.
    /// Default: `1 << 20`.
    public var initialWindowSize: Int
    /// Send GOAWAY on a connection once it has received this many requests (last-stream-id = that request's
    /// stream); `nil` disables.
    /// Default: `nil`.
    public var goAwayAfterStreams: Int?
    /// Debug data carried by automatic GOAWAY frames.
    /// Default: `""`.
    public var goAwayDebugData: String
    /// `listen(2)` backlog.
    /// Default: `1024`.
    public var backlog: Int32

    public init(
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

/// A complete request received by an `HTTP2Server`.
public struct HTTP2ServerRequest: Sendable {
    public var method: String
    public var path: String
    public var authority: String
    public var scheme: String
    /// Regular header fields (no pseudo-headers), in arrival order.
    public var headers: [HTTP2Header]
    public var body: [UInt8]
    public var streamID: Int32
    /// The connection it arrived on (to change its SETTINGS, send GOAWAY, or drop it).
    public var connection: HTTP2ServerConnection
}

/// Answers one request, once, from any thread and at any time (later calls and calls after the stream was reset
/// or the connection closed are ignored).
public struct HTTP2ServerResponder: Sendable {
    let connection: HTTP2ServerConnection
    let streamID: Int32

    /// Sends the response: HEADERS with `:status` and `headers`, then `body` (if any) with END_STREAM.
    public func respond(status: Int, headers: [HTTP2Header] = [], body: [UInt8] = []) {
        connection.respond(streamID: streamID, status: status, headers: headers, body: body)
    }

    /// Resets the stream with `errorCode` (e.g. 7 = REFUSED_STREAM) instead of answering.
    public func reset(errorCode: UInt32) {
        connection.reset(streamID: streamID, errorCode: errorCode)
    }
}
