/// A point-in-time view of one pool.
package struct APNsPoolStatus: Sendable, Hashable {
    package let endpoint: APNsEndpoint
    /// Connections open (ready or draining).
    package let openConnections: Int
    /// Requests on the wire.
    package let inFlight: Int
    /// Requests waiting for a connection or a free stream.
    let queued: Int
    /// Each slot's stream limit (0: no connection; 1: not yet authenticated).
    let streamLimits: [Int]
    /// Why the last connection attempt failed (TLS, DNS, refused…); nil once a connection succeeds.
    package let lastConnectError: String?
}
