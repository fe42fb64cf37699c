/// What a pool knows of one of its open connections and changes as pushes come and go (pool lock only).
struct APNsConnectionUsage {
    /// Requests handed to the connection and not yet answered.
    var inFlight = 0
    /// Token auth: a request passed authentication on this connection, so it may use the server's full stream limit
    /// (APNs allows one stream until then). Always true for certificate auth.
    var authenticated: Bool
    /// The server answered a request on it (any HTTP status): it is not a connection the peer ends right after its
    /// handshake, however short its life.
    var answered = false
    /// No new requests; closed once `inFlight` reaches 0.
    var retiring = false
    var closeRequested = false
    /// The provider token this connection uses, and since when (token-clock seconds).
    var token: APNsProviderToken?
    var tokenSince: Double = 0

    /// Streams the pool may have open on `connection` now: one until authenticated, then the server's limit.
    func capacity(of connection: APNsPooledConnection) -> Int {
        authenticated ? max(1, connection.connection.maxConcurrentStreams) : 1
    }

    /// The provider token for this connection's next pushes: the one it has while the provider lets it keep that
    /// one (tokens change per connection at most every 20 minutes), else `current` from now on.
    mutating func token(for current: APNsProviderToken, now: Double, tokens: APNsTokenProvider?) -> APNsProviderToken {
        if let token, token != current, tokens?.mayKeep(token, since: tokenSince, now: now) == true { return token }
        if token != current {
            token = current
            tokenSince = now
        }
        return current
    }

    /// Counts one finished request — `answered` when the server answered it, `passed` when the answer shows the
    /// provider token passed; true when the connection is retiring and now idle, so it must be closed.
    mutating func finishOne(answered: Bool, authenticated passed: Bool) -> Bool {
        inFlight -= 1
        if answered { self.answered = true }
        if passed { authenticated = true }
        return takeCloseRequest()
    }

    /// Marks a retiring, idle connection as closing; true once (the caller closes it).
    mutating func takeCloseRequest() -> Bool {
        guard retiring, inFlight == 0, !closeRequested else { return false }
        closeRequested = true
        return true
    }
}
