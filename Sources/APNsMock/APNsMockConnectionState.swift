internal import Crypto
import Synchronization

/// Per-connection state the validator needs: the client certificate the TLS handshake verified (certificate auth),
/// the key bound on the first authenticated push, the current provider token and when it was first used, and the
/// stream count (for "GOAWAY after N streams").
///
/// A server creates one per accepted connection and passes it to every ``APNsMockValidator/handle(_:connection:)``
/// call for that connection. Thread-safe.
final class APNsMockConnectionState: Sendable {
    struct State {
        var boundKeyID: String?
        /// The `authorization` value of the token the connection uses now, and since when.
        var currentToken: String?
        var currentTokenSince: Double = 0
        /// The last `authorization` value whose token decoded and verified on this connection, with its key id and
        /// `iat`: APNs does not re-verify an unchanged token on every request, and neither does the mock.
        var verifiedToken: (authorization: String, keyID: String, issuedAt: Int64)?
        var tokenUpdates = 0
        var goAwaySent = false
    }

    /// An identifier for logs and the recorder.
    package let id: Int
    let state = Mutex(State())
    /// Streams handled so far (counted without the lock).
    let streams = Atomic<Int>(0)

    /// The fingerprint of the client certificate the connection's TLS handshake verified against the server's
    /// client CA; nil when it presented none. A connection with one is checked as certificate auth.
    package let clientCertificate: CertificateFingerprint?

    init(id: Int = 0) {
        self.id = id
        clientCertificate = nil
    }

    /// A connection whose TLS handshake verified the client certificate `clientCertificate` (nil: none presented).
    package init(id: Int = 0, clientCertificate: CertificateFingerprint?) {
        self.id = id
        self.clientCertificate = clientCertificate
    }

    /// Streams handled so far on this connection.
    var streamCount: Int { streams.load(ordering: .relaxed) }
    /// The `kid` bound to this connection by its first authenticated push.
    var boundKeyID: String? { state.withLock { $0.boundKeyID } }
    /// How many times the connection switched to a new token after the first.
    var tokenUpdateCount: Int { state.withLock { $0.tokenUpdates } }
}
