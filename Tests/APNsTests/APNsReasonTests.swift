@testable import APNs
import Testing

@Suite struct APNsReasonTests {
    /// (status, reason, expected disposition) for every documented reason.
    static let table: [(Int, String, APNsDisposition)] = [
        (400, "BadCollapseId", .permanent), (400, "BadDeviceToken", .tokenInvalid),
        (400, "BadExpirationDate", .permanent), (400, "BadMessageId", .permanent), (400, "BadPriority", .permanent),
        (400, "BadTopic", .permanent), (400, "DeviceTokenNotForTopic", .tokenInvalid),
        (400, "DuplicateHeaders", .permanent), (400, "IdleTimeout", .retryLater), (400, "InvalidPushType", .permanent),
        (400, "MissingDeviceToken", .permanent), (400, "MissingTopic", .permanent), (400, "PayloadEmpty", .permanent),
        (400, "TopicDisallowed", .permanent), (403, "BadCertificate", .fixCredentials),
        (403, "BadCertificateEnvironment", .fixCredentials), (403, "ExpiredProviderToken", .fixCredentials),
        (403, "Forbidden", .fixCredentials), (403, "InvalidProviderToken", .fixCredentials),
        (403, "MissingProviderToken", .fixCredentials), (403, "UnrelatedKeyIdInToken", .fixCredentials),
        (403, "BadEnvironmentKeyIdInToken", .fixCredentials), (403, "BadEnvironmentKeyInToken", .fixCredentials),
        (404, "BadPath", .permanent), (405, "MethodNotAllowed", .permanent), (410, "ExpiredToken", .tokenInvalid),
        (410, "Unregistered", .tokenInvalid), (413, "PayloadTooLarge", .permanent),
        (429, "TooManyProviderTokenUpdates", .fixCredentials), (429, "TooManyRequests", .retryLater),
        (500, "InternalServerError", .retryLater), (503, "ServiceUnavailable", .retryLater),
        (503, "Shutdown", .retryLater),
    ]

    @Test func everyDocumentedReasonIsClassified() {
        #expect(Self.table.count == APNsReason.allDevicePushReasons.count)
        for (status, reason, expected) in Self.table {
            let body = Array(#"{"reason":"\#(reason)"}"#.utf8)
            let result = APNsResult(status: status, headers: [], body: body)
            #expect(result.disposition == expected, "\(status) \(reason)")
            #expect(result.reason == reason)
            #expect(result.status == status)
            #expect(APNsReason(reason).documentedStatus == status, "\(reason)")
            #expect(APNsReason(reason).isKnown)
            #expect(!APNsReason(reason).hint.isEmpty)
        }
    }

    @Test(arguments: [
        (400, APNsDisposition.permanent), (403, .fixCredentials), (404, .permanent), (410, .tokenInvalid),
        (413, .permanent), (429, .retryLater), (500, .retryLater), (502, .retryLater), (503, .retryLater),
        (504, .retryLater), (418, .permanent),
    ])
    func unknownReasonsFallBackOnStatus(status: Int, expected: APNsDisposition) {
        let unknown = APNsResult(status: status, headers: [], body: Array(#"{"reason":"SomethingNew"}"#.utf8))
        #expect(unknown.disposition == expected)
        #expect(unknown.reason == "SomethingNew")
        #expect(!APNsReason("SomethingNew").isKnown)
        let noBody = APNsResult(status: status, headers: [], body: [])
        #expect(noBody.disposition == expected)
        #expect(noBody.reason == nil)
    }

    @Test func successParsesHeaders() {
        let result = APNsResult(
            status: 200,
            headers: [("APNS-ID", "1294465C-E2AA-4F25-9D3E-8BDB0E7D8A67"), ("apns-unique-id", "a3b4c5d6-0000-1111-2222-333344445555")],
            body: []
        )
        #expect(result.disposition == .delivered)
        #expect(result.apnsID == "1294465c-e2aa-4f25-9d3e-8bdb0e7d8a67")
        #expect(result.apnsUniqueID == "a3b4c5d6-0000-1111-2222-333344445555")
        #expect(result.reason == nil)
    }

    @Test func unregisteredCarriesTimestamp() {
        let result = APNsResult(status: 410, headers: [], body: Array(#"{"reason":"Unregistered","timestamp":1764489600123}"#.utf8))
        #expect(result.disposition == .tokenInvalid)
        #expect(result.timestampMilliseconds == 1_764_489_600_123)
        let asString = APNsResult(status: 410, headers: [], body: Array(#"{"reason":"Unregistered","timestamp":"42"}"#.utf8))
        #expect(asString.timestampMilliseconds == 42)
    }

    @Test(arguments: [
        "", "not json", "{", "[]", #"{"reason":5}"#, #"{"reason":""}"#, "\u{0}\u{1}\u{2}", #"{"timestamp":"soon"}"#,
        #"{"reason":null,"timestamp":true}"#, #"{"timestamp":1e300}"#,
    ])
    func badBodiesAreTolerated(body: String) {
        let result = APNsResult(status: 400, headers: [], body: Array(body.utf8))
        #expect(result.disposition == .permanent)
        #expect(result.reason == nil)
        #expect(result.timestampMilliseconds == nil)
    }

    @Test func transportFailuresRetryLater() {
        for reason in APNsReason.allTransportReasons {
            let result = APNsResult.transportFailure(reason: reason, id: APNsID("8D7F0A52-3C1E-4B6A-9F00-123456789ABC"))
            #expect(result.disposition == .retryLater)
            #expect(result.status == nil)
            #expect(result.reason == reason.rawValue)
            #expect(result.apnsID == "8d7f0a52-3c1e-4b6a-9f00-123456789abc")
        }
        #expect(APNsResult.transportFailure(reason: .connectionLost).needsNewConnection)
        #expect(!APNsResult.transportFailure(reason: .notProcessed).needsNewConnection)
    }

    @Test func refreshAndReconnectFlags() {
        let reconnect: Set<APNsReason> = [
            .internalServerError, .shutdown, .idleTimeout, .unrelatedKeyIdInToken, .tooManyProviderTokenUpdates,
            .expiredProviderToken,
        ]
        for reason in APNsReason.allDevicePushReasons {
            #expect(reason.needsTokenRefresh == (reason == .expiredProviderToken), "\(reason)")
            #expect(reason.needsNewConnection == reconnect.contains(reason), "\(reason)")
        }
        let expired = APNsResult(status: 403, headers: [], body: Array(#"{"reason":"ExpiredProviderToken"}"#.utf8))
        #expect(expired.needsTokenRefresh && expired.needsNewConnection)
        #expect(APNsResult(status: 500, headers: [], body: []).needsNewConnection)
    }

    @Test func hintsUseRequestDetails() throws {
        let token = try DeviceToken(String(repeating: "ab", count: 32))
        let big = try APNsRequest(
            deviceToken: token, pushType: .voip, topic: "com.example.app.voip", payload: Array(repeating: 0x20, count: 5000)
        )
        // The hint computes the overshoot from the request's payload and limit.
        let alert = try APNsRequest(deviceToken: token, pushType: .alert, topic: "com.example.app", payload: Array(repeating: 0x20, count: 4000))
        #expect(APNsReason.payloadTooLarge.hint(request: big, endpoint: nil).contains("5120"))
        #expect(!APNsReason.payloadTooLarge.hint(request: alert, endpoint: nil).isEmpty)
        #expect(APNsReason.badDeviceToken.hint(request: nil, endpoint: .production).contains("sandbox"))
        #expect(APNsReason.badDeviceToken.hint(request: nil, endpoint: .production).contains("This push went to production"))
        #expect(APNsReason.deviceTokenNotForTopic.hint(request: big, endpoint: nil).contains(".voip"))
        #expect(APNsReason.expiredProviderToken.hint.contains("clock"))
        #expect(APNsReason("Weird").hint.contains("Unknown reason"))
    }
}
