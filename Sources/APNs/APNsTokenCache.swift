public import Crypto
import Synchronization

/// One provider token per key, shared by every connection that uses the key, refreshed on a schedule.
///
/// APNs rejects a token whose `iat` is more than an hour old (`ExpiredProviderToken`) and a token replaced more
/// than once per 20 minutes on one connection (`TooManyProviderTokenUpdates`). The cache mints a token on first
/// use, hands the same token to every caller, and mints the next one once the current one is
/// ``Configuration/refreshAfterSeconds`` old. It never mints again before ``Configuration/minimumAgeSeconds``,
/// not even when asked to by ``invalidate(ifMatches:)``.
///
/// - Important: thread-safe. Minting happens under the lock, so concurrent callers get one new token, not many.
public final class APNsTokenCache: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Age at which the next token is minted. Clamped to `minimumAgeSeconds...maximumAgeSeconds - 60`.
        /// Default: 3000 (50 minutes).
        public var refreshAfterSeconds: Double
        /// A token is never replaced before this age. Default: 1200 (20 minutes, APNs' rule).
        public var minimumAgeSeconds: Double
        /// APNs' hard limit on a token's age. Default: 3600 (60 minutes).
        public var maximumAgeSeconds: Double

        public init(refreshAfterSeconds: Double = 3000, minimumAgeSeconds: Double = 1200, maximumAgeSeconds: Double = 3600) {
            self.refreshAfterSeconds = refreshAfterSeconds
            self.minimumAgeSeconds = minimumAgeSeconds
            self.maximumAgeSeconds = maximumAgeSeconds
        }

        /// ``refreshAfterSeconds`` clamped into the window APNs allows.
        public var effectiveRefreshAfterSeconds: Double {
            min(max(refreshAfterSeconds, minimumAgeSeconds), max(minimumAgeSeconds, maximumAgeSeconds - 60))
        }
    }

    private struct State {
        var current: APNsProviderToken?
        var forceRefresh = false
        var mintCount = 0
    }

    public let signer: JWTSigner
    public let configuration: Configuration
    private let clock: any APNsClock
    private let state = Mutex(State())

    public init(signer: JWTSigner, configuration: Configuration = Configuration(), clock: any APNsClock = APNsSystemClock()) {
        self.signer = signer
        self.configuration = configuration
        self.clock = clock
    }

    /// The token to send now, minted if there is none, it is due for refresh, or it was invalidated.
    /// - Throws: ``CryptoError`` when signing fails (the previous token, if any, stays current).
    public func token() throws(CryptoError) -> APNsProviderToken {
        let now = clock.now()
        return try state.withLock { (state) throws(CryptoError) -> APNsProviderToken in
            if let current = state.current {
                let age = current.age(at: now)
                let due = age >= configuration.effectiveRefreshAfterSeconds
                    || (state.forceRefresh && age >= configuration.minimumAgeSeconds)
                    || age < -60  // the clock went back a lot: this iat is in the future
                if !due { return current }
            }
            let token = try signer.makeToken(issuedAt: Int64(now.rounded(.down)))
            state.current = token
            state.forceRefresh = false
            state.mintCount += 1
            return token
        }
    }

    /// Asks for a new token after APNs answered `ExpiredProviderToken` to `token`.
    ///
    /// Only the current token can be invalidated, and only once it is at least the minimum age old; so when many
    /// streams report the same expired token, exactly one new token is minted.
    public func invalidate(ifMatches token: APNsProviderToken) -> APNsTokenInvalidation {
        let now = clock.now()
        return state.withLock { state in
            guard let current = state.current, current == token, !state.forceRefresh else { return .alreadyReplaced }
            guard current.age(at: now) >= configuration.minimumAgeSeconds else { return .tooRecent }
            state.forceRefresh = true
            return .willRemint
        }
    }

    /// How many tokens this cache has minted (for the JWT-refresh metric and tests).
    public var mintCount: Int { state.withLock { $0.mintCount } }

    /// The current token without minting, if any.
    public var currentToken: APNsProviderToken? { state.withLock { $0.current } }
}
