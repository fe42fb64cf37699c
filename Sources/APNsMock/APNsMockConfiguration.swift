internal import APNs
package import Crypto
package import Telemetry

/// What the mock APNs server accepts: how clients authenticate, which topics exist, and the time rules.
package struct APNsMockConfiguration: Sendable {
    package enum Authentication: Sendable {
        /// Token auth: `authorization: bearer <ES256 JWT>` signed by one of `keys` (by `kid`), with `iss == teamID`
        /// (or the key's own team in ``APNsMockConfiguration/keyTeams``).
        case providerToken(keys: [String: ES256PublicKey], teamID: String)
        /// Token auth without a key to check signatures against (`callpush mock-apns` with neither `--key-file` nor
        /// `--client-ca`): like APNs, a request without `authorization` gets `403 MissingProviderToken`; the token
        /// must be a `bearer` JWT with `alg` ES256, a `kid`, an `iss` and an integer `iat`, and the age, update and
        /// key-binding rules apply, but its signature is not verified (there is no key).
        case unverifiedProviderToken
        /// Certificate auth: the TLS layer authenticated the client (the server's `clientCAFile`); `authorization`
        /// is ignored. Without a client CA nothing authenticates the client: use it so only in tests.
        ///
        /// Whatever the case, a connection that presented a client certificate the TLS layer verified is checked as
        /// certificate auth (see ``APNsMockConfiguration/clientCertificates``); the case applies to the others.
        case certificate
        /// Open mode for load tests (`mock-apns --accept-any-token`): requests are accepted with or without
        /// `authorization`, which is not looked at. Real APNs has no such mode.
        case acceptAnyToken
    }

    /// Default: `.certificate` (for tests that use certificate credentials; token tests pass keys; the
    /// `mock-apns` command picks ``Authentication/unverifiedProviderToken`` when given no key and no client CA).
    package var authentication: Authentication
    /// The team of each key (by `kid`) that belongs to another team than the `teamID` of
    /// ``Authentication/providerToken(keys:teamID:)``: several teams' apps on one server.
    /// Default: empty (every key belongs to that `teamID`).
    package var keyTeams: [String: String] = [:]
    /// Bundle IDs that may be pushed to (topics are these plus a push type's suffix). Empty means any bundle ID.
    /// Default: empty.
    package var allowedBundleIDs: Set<String>
    /// Certificate apps: each registered client certificate (by SHA-256 fingerprint) and the bundle IDs it may push
    /// to (one app's, as an APNs certificate covers one app). A connection whose TLS handshake verified a client
    /// certificate is checked as certificate auth whatever ``authentication`` says (`authorization` is ignored): a
    /// certificate not in this table gets `403 BadCertificate`, a topic outside its bundle IDs `400 TopicDisallowed`.
    /// With token ``authentication`` and an optional client CA on the server, token apps and certificate apps
    /// share one server (`mock-apns --apps` with both kinds).
    /// Default: empty (any verified certificate may push to ``allowedBundleIDs``).
    package var clientCertificates: [CertificateFingerprint: Set<String>] = [:]
    /// A token whose `iat` is older than this gets `403 ExpiredProviderToken`. Default: 1 hour.
    var maximumTokenAge: Duration
    /// A token whose `iat` is further than this in the future gets `403 InvalidProviderToken`. Default: 5 minutes.
    var maximumTokenClockSkew: Duration
    /// A new token on one connection less than this after the previous one gets `429 TooManyProviderTokenUpdates`.
    /// Default: 20 minutes.
    var minimumTokenUpdateInterval: Duration
    /// Answer `403 UnrelatedKeyIdInToken` when a connection's tokens switch to another `kid`. Default: true.
    var bindsKeyToConnection: Bool
    /// Send `apns-unique-id` on success, as the sandbox does. Default: true.
    ///
    /// `apns-id` is always echoed exactly as the request sent it (APNs does; clients such as aioapns match the echo
    /// byte for byte); only a request without one gets a generated id, in uppercase as APNs generates them.
    var sendsUniqueID: Bool
    /// Time source for token ages and 410 timestamps. Default: the system clock.
    var clock: any WallClock
    /// A lower payload limit than Apple's (4096, 5120 for voip), to exercise `413 PayloadTooLarge` with requests a
    /// client would not refuse. Default: nil (Apple's limits).
    var maximumPayloadBytes: Int?

    package init(
        authentication: Authentication = .certificate,
        allowedBundleIDs: Set<String> = [],
        maximumTokenAge: Duration = .seconds(3600),
        maximumTokenClockSkew: Duration = .seconds(300),
        minimumTokenUpdateInterval: Duration = .seconds(1200),
        bindsKeyToConnection: Bool = true,
        sendsUniqueID: Bool = true,
        clock: any WallClock = SystemWallClock(),
        maximumPayloadBytes: Int? = nil
    ) {
        self.authentication = authentication
        self.allowedBundleIDs = allowedBundleIDs
        self.maximumTokenAge = maximumTokenAge
        self.maximumTokenClockSkew = maximumTokenClockSkew
        self.minimumTokenUpdateInterval = minimumTokenUpdateInterval
        self.bindsKeyToConnection = bindsKeyToConnection
        self.sendsUniqueID = sendsUniqueID
        self.clock = clock
        self.maximumPayloadBytes = maximumPayloadBytes
    }
}
