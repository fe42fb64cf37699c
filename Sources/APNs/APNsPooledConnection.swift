import Runtime
import HTTP2

/// One HTTP/2 connection of a pool: what stays the same while it is open. Its streams' completions carry it; what
/// changes (``APNsConnectionUsage``) lives in the pool's state, under the pool's lock.
struct APNsPooledConnection: Sendable {
    let id: Int
    let slot: Int
    let connection: HTTP2ClientConnection
    let opened: HTTP2Deadline

    /// The key of this connection in the pool's state.
    var key: ObjectIdentifier { ObjectIdentifier(connection) }
}
