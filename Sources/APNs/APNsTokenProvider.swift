import Crypto
import Synchronization
import Telemetry

/// The client's provider-token source: one shared ``APNsTokenCache`` plus what the pools need around it, the
/// refresh counter and the issue time below which tokens are known to be rejected (so no connection keeps using an
/// invalidated token).
final class APNsTokenProvider: Sendable {
    let cache: APNsTokenCache
    let clock: any WallClock
    private let refreshes: Counter
    private let lastMintCount = Atomic<Int>(0)
    private let invalidatedBefore = Atomic<Int64>(Int64.min)

    init(cache: APNsTokenCache, clock: any WallClock, refreshes: Counter) {
        self.cache = cache
        self.clock = clock
        self.refreshes = refreshes
    }

    /// The cache's current token (minting when due); nil when signing failed.
    func current() -> APNsProviderToken? {
        let current = try? cache.tokenAndMintCount()
        let minted = current?.mintCount ?? cache.mintCount
        if minted > lastMintCount.load(ordering: .relaxed) {
            let old = lastMintCount.exchange(minted, ordering: .relaxed)
            if minted > old { refreshes.increment(by: minted - old) }
        }
        return current?.token
    }

    /// After `ExpiredProviderToken` for `token`: invalidate it in the cache and never pin it again.
    func invalidate(_ token: APNsProviderToken) -> APNsTokenInvalidation {
        let outcome = cache.invalidate(ifMatches: token)
        if outcome != .tooRecent {
            var current = invalidatedBefore.load(ordering: .relaxed)
            while current <= token.issuedAt {
                let (exchanged, original) = invalidatedBefore.compareExchange(
                    expected: current, desired: token.issuedAt + 1, ordering: .relaxed)
                if exchanged { break }
                current = original
            }
        }
        return outcome
    }

    /// Whether a connection may keep sending `pinned` instead of switching to `current`: APNs counts token changes
    /// per connection (`TooManyProviderTokenUpdates` when more often than every 20 minutes), so a connection keeps
    /// the token it started with for at least the minimum age, as long as that token is far from expiring and was not
    /// invalidated.
    func mayKeep(_ pinned: APNsProviderToken, since: Double, now: Double) -> Bool {
        guard pinned.issuedAt >= invalidatedBefore.load(ordering: .relaxed) else { return false }
        let configuration = cache.configuration
        return now - since < configuration.minimumAge.inSeconds
            && pinned.age(at: now) < (configuration.maximumAge - .seconds(300)).inSeconds
    }
}
