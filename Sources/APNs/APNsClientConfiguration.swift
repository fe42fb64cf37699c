package import Telemetry

/// Settings of an ``APNsClient``: where to connect, how to authenticate, how many connections, and the timers.
package struct APNsClientConfiguration: Sendable {
    /// How the client authenticates (provider token or TLS client certificate).
    /// Default: none; required.
    package var credentials: APNsCredentials
    /// Endpoint for pushes whose environment is `.production`.
    /// Default: ``APNsEndpoint/production`` (`api.push.apple.com:443`).
    var productionEndpoint: APNsEndpoint
    /// Endpoint for pushes whose environment is `.sandbox`.
    /// Default: ``APNsEndpoint/sandbox`` (`api.sandbox.push.apple.com:443`).
    var sandboxEndpoint: APNsEndpoint
    /// When set, every push goes here whatever its environment (a mock, a proxy, a staging server).
    /// Default: `nil`.
    var customEndpoint: APNsEndpoint?
    /// HTTP/2 connections per pool; there is one pool per endpoint in use. They are spread round-robin over every
    /// address (IPv4 and IPv6) the endpoint's host resolves to, as Apple advises; the host is resolved again for
    /// every new connection, and a connection whose address refuses falls back to the next one.
    /// Default: 2.
    package var connectionsPerPool: Int
    /// What to connect to instead of resolving the endpoint's host: names or IP literals (each resolved with
    /// `getaddrinfo`), asked again before every new connection. The host still names the server for SNI,
    /// certificate verification and `:authority`. For tests and for pinned egress addresses.
    /// Default: `nil` (resolve the endpoint's host).
    var addressResolver: (@Sendable (APNsEndpoint) -> [String])?
    /// Time from `send` to an answer, including waiting for a connection or a free stream and transparent resends.
    /// Past it the push is answered with `Timeout` (retry later).
    /// Default: 10 s.
    package var requestTimeout: Duration
    /// Send a PING after this long without receiving anything on a connection; `nil` disables.
    /// Default: 60 s.
    package var pingInterval: Duration?
    /// A PING not acknowledged within this closes the connection (its streams end with `ConnectionLost`).
    /// Default: 5 s.
    var pingTimeout: Duration
    /// TCP connect + TLS handshake + first SETTINGS.
    /// Default: 10 s.
    package var connectTimeout: Duration
    /// First delay after a failed connect; doubles after each further failure.
    /// Default: 1 s.
    var reconnectBackoffInitial: Duration
    /// Ceiling for the reconnect delay.
    /// Default: 60 s.
    var reconnectBackoffMaximum: Duration
    /// A connection older than this is replaced gracefully (new one opened, old one drained then closed);
    /// `nil` keeps connections forever.
    /// Default: 12 h.
    var maximumConnectionAge: Duration?
    /// Event-loop threads (each connection lives on one; connections are spread over them in turn).
    /// Default: 1 (`callpush run` uses 2: see `apns.event-loops`).
    package var eventLoops: Int
    /// Local cap on concurrent streams per connection (the effective limit is `min(this, server's SETTINGS)`).
    /// Default: 1000.
    var maxConcurrentStreamsPerConnection: Int
    /// How many times a request the server did not process (GOAWAY, REFUSED_STREAM, local queue) is re-sent
    /// before it is answered with `NotProcessed`.
    /// Default: 3.
    var maximumTransparentResends: Int
    /// Provider-token refresh timing (token auth only).
    /// Default: `APNsTokenCache.Configuration()` (refresh at 50 min, never before 20 min).
    var tokenCache: APNsTokenCache.Configuration
    /// Clock for provider tokens (`iat`, ages). Tests inject a manual clock.
    /// Default: `SystemWallClock`.
    var clock: any WallClock
    /// Verify the server's certificate chain and name. Turn off only in tests.
    /// Default: `true`.
    var verifyPeer: Bool
    /// How often the pool checks queued deadlines, connection ages and reconnect timers.
    /// Default: 50 ms.
    var maintenanceInterval: Duration
    /// A connection that served this long (or answered a request) before it went away or closed clears the pool's
    /// connect failures; one that ended sooner without an answer (a GOAWAY or reset right after the handshake) counts
    /// as a failed connect, and its replacement waits the back-off. Default: 1 s.
    var healthyConnectionAge: Duration = .seconds(1)
    /// The first HTTP/2 stream id of every connection (tests start near the id at which a connection retires).
    /// Default: 1.
    var firstStreamID: Int32 = 1

    package init(
        credentials: APNsCredentials,
        productionEndpoint: APNsEndpoint = .production,
        sandboxEndpoint: APNsEndpoint = .sandbox,
        customEndpoint: APNsEndpoint? = nil,
        connectionsPerPool: Int = 2,
        addressResolver: (@Sendable (APNsEndpoint) -> [String])? = nil,
        requestTimeout: Duration = .seconds(10),
        pingInterval: Duration? = .seconds(60),
        pingTimeout: Duration = .seconds(5),
        connectTimeout: Duration = .seconds(10),
        reconnectBackoffInitial: Duration = .seconds(1),
        reconnectBackoffMaximum: Duration = .seconds(60),
        maximumConnectionAge: Duration? = .seconds(12 * 3600),
        eventLoops: Int = 1,
        maxConcurrentStreamsPerConnection: Int = 1000,
        maximumTransparentResends: Int = 3,
        tokenCache: APNsTokenCache.Configuration = APNsTokenCache.Configuration(),
        clock: any WallClock = SystemWallClock(),
        verifyPeer: Bool = true,
        maintenanceInterval: Duration = .milliseconds(50)
    ) {
        self.credentials = credentials
        self.productionEndpoint = productionEndpoint
        self.sandboxEndpoint = sandboxEndpoint
        self.customEndpoint = customEndpoint
        self.connectionsPerPool = connectionsPerPool
        self.addressResolver = addressResolver
        self.requestTimeout = requestTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.connectTimeout = connectTimeout
        self.reconnectBackoffInitial = reconnectBackoffInitial
        self.reconnectBackoffMaximum = reconnectBackoffMaximum
        self.maximumConnectionAge = maximumConnectionAge
        self.eventLoops = eventLoops
        self.maxConcurrentStreamsPerConnection = maxConcurrentStreamsPerConnection
        self.maximumTransparentResends = maximumTransparentResends
        self.tokenCache = tokenCache
        self.clock = clock
        self.verifyPeer = verifyPeer
        self.maintenanceInterval = maintenanceInterval
    }

    /// The endpoint a push for `environment` goes to.
    package func endpoint(for environment: APNsEnvironment) -> APNsEndpoint {
        if let customEndpoint { return customEndpoint }
        return environment == .production ? productionEndpoint : sandboxEndpoint
    }

    /// The reconnect delay after `failures` consecutive failed connects (1 → initial, doubling, capped).
    func reconnectDelay(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        var delay = reconnectBackoffInitial
        for _ in 1..<min(failures, 32) {
            delay *= 2
            if delay >= reconnectBackoffMaximum { return reconnectBackoffMaximum }
        }
        return min(delay, reconnectBackoffMaximum)
    }
}
