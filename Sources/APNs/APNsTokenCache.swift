package import Crypto
internal import Telemetry
import Synchronization

/// One provider token per key, shared by every connection that uses the key, refreshed on a schedule.
///
/// APNs rejects a token whose `iat` is more than an hour old (`ExpiredProviderToken`) and a token replaced more
/// than once per 20 minutes on one connection (`TooManyProviderTokenUpdates`). The cache mints a token on first
/// use, hands the same token to every caller, and mints the next one once the current one is
/// ``Configuration/refreshAfter`` old. It never mints again before ``Configuration/minimumAge``,
/// not even when asked to by ``invalidate(ifMatches:)``.
///
/// - Important: thread-safe. Minting happens under the lock, so concurrent callers get one new token, not many.
package final class APNsTokenCache: Sendable {
    package struct Configuration: Sendable, Hashable {
        /// Age at which the next token is minted. Clamped to `minimumAge...maximumAge - 60 s`.
        /// Default: 50 minutes.
        var refreshAfter: Duration
        /// A token is never replaced before this age. Default: 20 minutes (APNs' rule).
        var minimumAge: Duration
        /// APNs' hard limit on a token's age. Default: 60 minutes.
        var maximumAge: Duration

        package init(
            refreshAfter: Duration = .seconds(3000),
            minimumAge: Duration = .seconds(1200),
            maximumAge: Duration = .seconds(3600)
        ) {
            self.refreshAfter = refreshAfter
            self.minimumAge = minimumAge
            self.maximumAge = maximumAge
        }

        /// ``refreshAfter`` clamped into the window APNs allows.
        var effectiveRefreshAfter: Duration {
            min(max(refreshAfter, minimumAge), max(minimumAge, maximumAge - .seconds(60)))
        }
    }

    private struct State {
        var current: APNsProviderToken?
        var forceRefresh = false
        var mintCount = 0
    }

    let signer: JWTSigner
    package let configuration: Configuration
    private let clock: any WallClock
    private let state = Mutex(State())

    init(signer: JWTSigner, configuration: Configuration = Configuration(), clock: any WallClock = SystemWallClock()) {
        self.signer = signer
        self.configuration = configuration
        self.clock = clock
    }

    /// The token to send now, minted if there is none, it is due for refresh, or it was invalidated.
    /// - Throws: ``CryptoError`` when signing fails (the previous token, if any, stays current).
    package func token() throws(CryptoError) -> APNsProviderToken {
        try tokenAndMintCount().token
    }

    /// ``token()`` and ``mintCount`` after it, under one lock (the pools ask for both on every dispatch).
    func tokenAndMintCount() throws(CryptoError) -> (token: APNsProviderToken, mintCount: Int) {
        let now = clock.now().seconds
        return try state.withLock { (state) throws(CryptoError) -> (token: APNsProviderToken, mintCount: Int) in
            if let current = state.current {
                let age = current.age(at: now)
                let due = age >= configuration.effectiveRefreshAfter.inSeconds
                    || (state.forceRefresh && age >= configuration.minimumAge.inSeconds)
                    || age < -60  // the clock went back a lot: this iat is in the future
                if !due { return (current, state.mintCount) }
            }
            let token = try signer.makeToken(issuedAt: Int64(now.rounded(.down)))
            state.current = token
            state.forceRefresh = false
            state.mintCount += 1
            return (token, state.mintCount)
        }
    }

    /// Asks for a new token after APNs answered `ExpiredProviderToken` to `token`.
    ///
    /// Only the current token can be invalidated, and only once it is at least the minimum age old; so when many
    /// streams report the same expired token, exactly one new token is minted.
    func invalidate(ifMatches token: APNsProviderToken) -> APNsTokenInvalidation {
        let now = clock.now().seconds
        return state.withLock { state in
            guard let current = state.current, current == token, !state.forceRefresh else { return .alreadyReplaced }
            guard current.age(at: now) >= configuration.minimumAge.inSeconds else { return .tooRecent }
            state.forceRefresh = true
            return .willRemint
        }
    }

    /// How many tokens this cache has minted (for the JWT-refresh metric and tests).
    var mintCount: Int { state.withLock { $0.mintCount } }

    /// The current token without minting, if any.
    var currentToken: APNsProviderToken? { state.withLock { $0.current } }
}
