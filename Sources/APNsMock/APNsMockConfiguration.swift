public import APNs
public import Crypto

/// What the mock APNs server accepts: how clients authenticate, which topics exist, and the time rules.
public struct APNsMockConfiguration: Sendable {
    public enum Authentication: Sendable {
        /// Token auth: `authorization: bearer <ES256 JWT>` signed by one of `keys` (by `kid`), with `iss == teamID`
        /// (or the key's own team in ``APNsMockConfiguration/keyTeams``).
        case providerToken(keys: [String: ES256PublicKey], teamID: String)
        /// Certificate auth: the TLS layer authenticated the client; `authorization` is ignored.
        case certificate
    }

    /// Default: `.certificate` (accept anything; tests of token auth pass keys).
    public var authentication: Authentication
    /// The team of each key (by `kid`) that belongs to another team than the `teamID` of
    /// ``Authentication/providerToken(keys:teamID:)``: several teams' apps on one server.
    /// Default: empty (every key belongs to that `teamID`).
    public var keyTeams: [String: String] = [:]
    /// Bundle IDs that may be pushed to (topics are these plus a push type's suffix). Empty means any bundle ID.
    /// Default: empty.
    public var allowedBundleIDs: Set<String>
    /// A token whose `iat` is older than this gets `403 ExpiredProviderToken`. Default: 3600.
    public var maximumTokenAgeSeconds: Double
    /// A token whose `iat` is further than this in the future gets `403 InvalidProviderToken`. Default: 300.
    public var maximumTokenClockSkewSeconds: Double
    /// A new token on one connection less than this after the previous one gets `429 TooManyProviderTokenUpdates`.
    /// Default: 1200 (20 minutes).
    public var minimumTokenUpdateIntervalSeconds: Double
    /// Answer `403 UnrelatedKeyIdInToken` when a connection's tokens switch to another `kid`. Default: true.
    public var bindsKeyToConnection: Bool
    /// Send `apns-unique-id` on success, as the sandbox does. Default: true.
    public var sendsUniqueID: Bool
    /// Return `apns-id` in uppercase, as APNs has been observed to (clients must compare case-insensitively).
    /// Default: true.
    public var uppercasesAPNsID: Bool
    /// Time source for token ages and 410 timestamps. Default: the system clock.
    public var clock: any APNsClock
    /// A lower payload limit than Apple's (4096, 5120 for voip), to exercise `413 PayloadTooLarge` with requests a
    /// client would not refuse. Default: nil (Apple's limits).
    public var maximumPayloadBytes: Int?

    public init(
        authentication: Authentication = .certificate,
        allowedBundleIDs: Set<String> = [],
        maximumTokenAgeSeconds: Double = 3600,
        maximumTokenClockSkewSeconds: Double = 300,
        minimumTokenUpdateIntervalSeconds: Double = 1200,
        bindsKeyToConnection: Bool = true,
        sendsUniqueID: Bool = true,
        uppercasesAPNsID: Bool = true,
        clock: any APNsClock = APNsSystemClock(),
        maximumPayloadBytes: Int? = nil
    ) {
        self.authentication = authentication
        self.allowedBundleIDs = allowedBundleIDs
        self.maximumTokenAgeSeconds = maximumTokenAgeSeconds
        self.maximumTokenClockSkewSeconds = maximumTokenClockSkewSeconds
        self.minimumTokenUpdateIntervalSeconds = minimumTokenUpdateIntervalSeconds
        self.bindsKeyToConnection = bindsKeyToConnection
        self.sendsUniqueID = sendsUniqueID
        self.uppercasesAPNsID = uppercasesAPNsID
        self.clock = clock
        self.maximumPayloadBytes = maximumPayloadBytes
    }
}
