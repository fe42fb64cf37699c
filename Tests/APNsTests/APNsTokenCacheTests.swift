@testable import Telemetry
import TestSupport
@testable import APNs
@testable import Crypto
import Testing

@Suite struct APNsTokenCacheTests {
    let clock = ManualWallClock()
    let cache: APNsTokenCache

    init() throws {
        let signer = JWTSigner(privateKey: try ES256PrivateKey.generate(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        cache = APNsTokenCache(signer: signer, clock: clock)
    }

    @Test func sharesOneTokenUntilRefreshDue() throws {
        let first = try cache.token()
        #expect(first.issuedAt == clock.now().wholeSeconds)
        for _ in 0..<10 {
            clock.advance(by: .seconds(60 * 4.9))  // up to 49 minutes
            #expect(try cache.token() == first)
        }
        #expect(cache.mintCount == 1)
        clock.advance(by: .seconds(60 + 1))  // 50 minutes and 1 second
        let second = try cache.token()
        #expect(second != first)
        #expect(second.issuedAt == clock.now().wholeSeconds)
        #expect(cache.mintCount == 2)
    }

    @Test func refreshWindowIsClampedBetween20And60Minutes() throws {
        let signer = JWTSigner(privateKey: try ES256PrivateKey.generate(), keyID: "K", teamID: "T")
        let eager = APNsTokenCache(signer: signer, configuration: .init(refreshAfter: .seconds(60)), clock: clock)
        #expect(eager.configuration.effectiveRefreshAfter == .seconds(1200))
        let first = try eager.token()
        clock.advance(by: .seconds(1199))
        #expect(try eager.token() == first)  // never before 20 minutes
        clock.advance(by: .seconds(1))
        #expect(try eager.token() != first)

        let lazy = APNsTokenCache(signer: signer, configuration: .init(refreshAfter: .seconds(7200)), clock: clock)
        #expect(lazy.configuration.effectiveRefreshAfter == .seconds(3540))
        let old = try lazy.token()
        clock.advance(by: .seconds(3540))
        #expect(try lazy.token() != old)  // always before 60 minutes
    }

    @Test func concurrentCallersGetTheSameToken() async throws {
        let tokens = try await withThrowingTaskGroup(of: APNsProviderToken.self) { group in
            for _ in 0..<16 { group.addTask { try cache.token() } }
            var all: Set<APNsProviderToken> = []
            for try await token in group { all.insert(token) }
            return all
        }
        #expect(tokens.count == 1)
        #expect(cache.mintCount == 1)
    }

    @Test func invalidateRemintsOnceAfterMinimumAge() throws {
        let first = try cache.token()
        #expect(cache.invalidate(ifMatches: first) == .tooRecent)
        #expect(try cache.token() == first)
        clock.advance(by: .seconds(25 * 60))
        #expect(cache.invalidate(ifMatches: first) == .willRemint)
        #expect(cache.invalidate(ifMatches: first) == .alreadyReplaced)  // many streams report the same token
        let second = try cache.token()
        #expect(second != first)
        #expect(cache.invalidate(ifMatches: first) == .alreadyReplaced)
        #expect(try cache.token() == second)
        #expect(cache.mintCount == 2)
    }

    @Test func clockGoingBackwardsRemints() throws {
        let first = try cache.token()
        clock.advance(by: .seconds(-3600))
        #expect(try cache.token() != first)
    }
}
