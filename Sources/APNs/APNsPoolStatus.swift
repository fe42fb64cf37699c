/// A point-in-time view of one pool.
public struct APNsPoolStatus: Sendable, Hashable {
    public let endpoint: APNsEndpoint
    /// Connections open (ready or draining).
    public let openConnections: Int
    /// Requests on the wire.
    public let inFlight: Int
    /// Requests waiting for a connection or a free stream.
    let queued: Int
    /// Each slot's stream limit (0: no connection; 1: not yet authenticated).
    let streamLimits: [Int]
    /// Why the last connection attempt failed (TLS, DNS, refused…); nil once a connection succeeds.
    public let lastConnectError: String?
}
