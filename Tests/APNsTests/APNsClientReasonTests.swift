@testable import Telemetry
import TestSupport
@testable import APNs
@testable import APNsMock
@testable import Crypto
import Foundation
import Testing

/// Every reason path end to end: APNsClient ↔ APNsMockServer over TLS.
@Suite(.timeLimit(.minutes(1))) struct APNsClientReasonTests {
    typealias Fixture = APNsClientFixture

    @Test func successReturnsDeliveredWithLowercasedAPNsID() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        let id = "6d1a6e0e-2e7c-4d3f-9a53-0b7d7f0d2c11"
        let request = try APNsRequest(
            deviceToken: DeviceToken(Fixture.deviceToken(7)), pushType: .alert, topic: Fixture.bundleID,
            payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8), apnsID: APNsID(id))
        let result = await fixture.send(request)
        #expect(result.disposition == .delivered)
        #expect(result.status == 200)
        #expect(result.apnsID == id)
        #expect(fixture.server.recorder.count("Success") == 1)
        #expect(fixture.client.metrics.requestCount(status: "200", reason: "Success") == 1)
    }

    @Test func unregisteredCarriesTimestamp() async throws {
        let token = Fixture.deviceToken(410)
        let fixture = try Fixture(faults: APNsMockFaults(
            unregisteredTokens: [token], unregisteredTimestampMilliseconds: 1_764_489_600_123))
        defer { fixture.shutdown() }
        let result = await fixture.send(try Fixture.alert(token: token))
        #expect(result.status == 410)
        #expect(result.reason == "Unregistered")
        #expect(result.disposition == .tokenInvalid)
        #expect(result.timestampMilliseconds == 1_764_489_600_123)
    }

    @Test func badDeviceTokenAndWrongTopicInvalidateTheToken() async throws {
        let bad = Fixture.deviceToken(400)
        let fixture = try Fixture(faults: APNsMockFaults(badTokens: [bad]))
        defer { fixture.shutdown() }
        let first = await fixture.send(try Fixture.alert(token: bad))
        #expect(first.status == 400)
        #expect(first.reason == "BadDeviceToken")
        #expect(first.disposition == .tokenInvalid)
        let second = await fixture.send(try Fixture.alert(topic: Fixture.bundleID + ".voip"))
        #expect(second.reason == "DeviceTokenNotForTopic")
        #expect(second.disposition == .tokenInvalid)
    }

    @Test func throttlingAndServerErrorsAreRetryLater() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        fixture.server.setFaults(APNsMockFaults(tooManyRequestsProbability: 1))
        let throttled = await fixture.send(try Fixture.alert())
        #expect(throttled.status == 429)
        #expect(throttled.reason == "TooManyRequests")
        #expect(throttled.disposition == .retryLater)

        fixture.server.setFaults(APNsMockFaults(serviceUnavailableProbability: 1))
        let unavailable = await fixture.send(try Fixture.alert())
        #expect(unavailable.status == 503)
        #expect(unavailable.disposition == .retryLater)

        fixture.server.setFaults(APNsMockFaults(internalServerErrorProbability: 1))
        let internalError = await fixture.send(try Fixture.alert())
        #expect(internalError.status == 500)
        #expect(internalError.reason == "InternalServerError")
        #expect(internalError.disposition == .retryLater)

        // 500 replaces the connection: the next push goes over a new one.
        fixture.server.setFaults(.none)
        let after = await fixture.send(try Fixture.alert())
        #expect(after.disposition == .delivered)
        #expect(fixture.eventCount("replaced") >= 1)
        #expect(fixture.server.acceptedConnections == 2)
    }

    @Test func payloadTooLargeIsPermanent() async throws {
        let fixture = try Fixture(maximumPayloadBytes: 256)
        defer { fixture.shutdown() }
        let result = await fixture.send(try Fixture.alert(payloadBytes: 1000))
        #expect(result.status == 413)
        #expect(result.reason == "PayloadTooLarge")
        #expect(result.disposition == .permanent)
    }

    @Test func invalidProviderTokenNeedsCredentials() async throws {
        let fixture = try Fixture(signingKey: try ES256PrivateKey.generate())
        defer { fixture.shutdown() }
        let result = await fixture.send(try Fixture.alert())
        #expect(result.status == 403)
        #expect(result.reason == "InvalidProviderToken")
        #expect(result.disposition == .fixCredentials)
        #expect(fixture.server.recorder.count("InvalidProviderToken") == 1)
    }

    @Test func expiredProviderTokenIsRemintedAndResentTransparently() async throws {
        let clientClock = ManualWallClock()
        let mockClock = ManualWallClock()
        let fixture = try Fixture(clientClock: clientClock, mockClock: mockClock)
        defer { fixture.shutdown() }
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
        let first = try #require(fixture.client.tokenCache?.currentToken)
        // Our clock is 40 minutes behind APNs': our 22-minute-old token is 62 minutes old for APNs.
        clientClock.advance(by: .seconds(1320))
        mockClock.advance(by: .seconds(3720))
        let result = await fixture.send(try Fixture.alert())
        #expect(result.disposition == .delivered)
        #expect(fixture.server.recorder.count("ExpiredProviderToken") == 1)
        let second = try #require(fixture.client.tokenCache?.currentToken)
        #expect(second != first)
        #expect(second.issuedAt == first.issuedAt + 1320)
        #expect(fixture.client.tokenCache?.mintCount == 2)
        #expect(fixture.eventCount("replaced") >= 1)
    }

    @Test func expiredTwiceSurfacesAsFixCredentials() async throws {
        // APNs' clock is far ahead: even the fresh token is expired.
        let clientClock = ManualWallClock()
        let mockClock = ManualWallClock()
        let fixture = try Fixture(clientClock: clientClock, mockClock: mockClock)
        defer { fixture.shutdown() }
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
        clientClock.advance(by: .seconds(1300))
        mockClock.advance(by: .seconds(100_000))
        let result = await fixture.send(try Fixture.alert())
        #expect(result.reason == "ExpiredProviderToken")
        #expect(result.disposition == .fixCredentials)
        #expect(fixture.server.recorder.count("ExpiredProviderToken") == 2)
    }

    @Test func tooManyProviderTokenUpdatesMovesToAFreshConnection() async throws {
        let clock = ManualWallClock()
        let fixture = try Fixture(clientClock: clock, mockClock: clock, minimumTokenUpdateInterval: .seconds(1_000_000))
        defer { fixture.shutdown() }
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
        clock.advance(by: .seconds(3001))  // the cache mints a new token; this connection must not see it... but APNs says no
        let result = await fixture.send(try Fixture.alert())
        #expect(fixture.server.recorder.count("TooManyProviderTokenUpdates") == 1)
        #expect(result.disposition == .delivered)
        #expect(fixture.server.acceptedConnections == 2)
    }

    @Test func jwtRefreshFollowsTheInjectedClock() async throws {
        let clock = ManualWallClock()
        let fixture = try Fixture(clientClock: clock, mockClock: clock)
        defer { fixture.shutdown() }
        let refreshes = { fixture.registry.counter(APNsClientMetrics.jwtRefreshes, help: "").value }
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
        #expect(refreshes() == 1)
        clock.advance(by: .seconds(1500))
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
        #expect(refreshes() == 1)
        clock.advance(by: .seconds(1501))  // 50 minutes: refresh
        #expect(await fixture.send(try Fixture.alert()).disposition == .delivered)
        #expect(refreshes() == 2)
        let current = try #require(fixture.client.tokenCache?.currentToken)
        #expect(current.issuedAt == Int64(1_764_489_600 + 3001))
        #expect(fixture.server.recorder.count("Success") == 3)
    }
}
