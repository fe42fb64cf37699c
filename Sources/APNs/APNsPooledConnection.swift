import HTTP2

/// One HTTP/2 connection as the pool sees it.
///
/// - Important: `@unchecked Sendable`: every `var` is read and written only under the owning pool's lock.
final class APNsPooledConnection: @unchecked Sendable {
    let id: Int
    let slot: Int
    let connection: HTTP2ClientConnection
    let openedNanoseconds: UInt64
    /// Requests handed to `connection` and not yet answered.
    var inFlight = 0
    /// Token auth: a request passed authentication on this connection, so it may use the server's full stream limit
    /// (APNs allows one stream until then). Always true for certificate auth.
    var authenticated: Bool
    /// No new requests; closed once `inFlight` reaches 0.
    var retiring = false
    var closeRequested = false
    /// The provider token this connection uses, and since when (token-clock seconds).
    var token: APNsProviderToken?
    var tokenSince: Double = 0

    init(id: Int, slot: Int, connection: HTTP2ClientConnection, authenticated: Bool) {
        self.id = id
        self.slot = slot
        self.connection = connection
        self.authenticated = authenticated
        openedNanoseconds = HTTP2Deadline.now().uptimeNanoseconds
    }

    /// How many streams the pool may have open on this connection now.
    var capacity: Int {
        if !authenticated { return 1 }
        return max(1, connection.maxConcurrentStreams)
    }
}
