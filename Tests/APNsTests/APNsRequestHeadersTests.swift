@testable import APNs
import Testing

@Suite struct APNsRequestHeadersTests {
    let token = "a1b2c3d4" + String(repeating: "00", count: 28)

    @Test func alertRequestWithEverything() throws {
        let request = try APNsRequest(
            deviceToken: DeviceToken(token), pushType: .alert, topic: "com.example.app", payload: Array(#"{"aps":{}}"#.utf8),
            priority: .immediate, expiration: .at(secondsSinceEpoch: 1_764_489_630), collapseID: "c-42",
            apnsID: APNsID("8d7f0a52-3c1e-4b6a-9f00-123456789abc")
        )
        let fields = request.headerFields(authority: "api.push.apple.com", bearerToken: "h.c.s")
        let expected: [(String, String, Bool)] = [
            (":method", "POST", false), (":scheme", "https", false), (":path", "/3/device/\(token)", true),
            (":authority", "api.push.apple.com", false), ("authorization", "bearer h.c.s", false),
            ("apns-push-type", "alert", false), ("apns-topic", "com.example.app", false), ("apns-priority", "10", false),
            ("apns-expiration", "1764489630", false), ("apns-collapse-id", "c-42", true),
            ("apns-id", "8d7f0a52-3c1e-4b6a-9f00-123456789abc", true), ("content-type", "application/json", false),
            ("content-length", "10", false),
        ]
        #expect(fields.count == expected.count)
        for (field, want) in zip(fields, expected) {
            #expect(field.name == want.0 && field.value == want.1 && field.neverIndex == want.2, "\(field)")
        }
        #expect(Set(fields.map(\.name)).count == fields.count)  // no duplicates
    }

    /// `apns-priority` carries each of the three priorities as its decimal number.
    @Test(arguments: [1, 5, 10])
    func priorityHeaderIsTheNumber(raw: Int) throws {
        let priority = try #require(APNsPriority(rawValue: raw))
        #expect(priority.description == String(raw))
        let request = try APNsRequest(deviceToken: DeviceToken(token), pushType: .alert, topic: "com.example.app",
                                      payload: Array(#"{"aps":{}}"#.utf8), priority: priority)
        #expect(request.http2Headers(authorization: nil).first(name: "apns-priority") == String(raw))
    }

    /// `:path` is the lowercased token after `/3/device/`, for the shortest and longest tokens accepted too.
    @Test(arguments: [16, 64, 200])
    func pathCarriesTheWholeToken(hexDigits: Int) throws {
        let text = String(repeating: "Ab", count: hexDigits / 2)
        let request = try APNsRequest(deviceToken: DeviceToken(text), pushType: .alert, topic: "com.example.app",
                                      payload: Array(#"{"aps":{}}"#.utf8))
        #expect(request.path == "/3/device/" + text.lowercased())
        #expect(request.path.utf8.count == 10 + hexDigits)
    }

    @Test func voipRequestWithCertificateAuthAndNoOptionals() throws {
        let request = try APNsRequest(
            deviceToken: DeviceToken(token), pushType: .voip, topic: APNsPushType.voip.topic(forBundleID: "com.example.app"),
            payload: Array(#"{"callId":"c-1"}"#.utf8), expiration: .immediately
        )
        let fields = request.headerFields(endpoint: .custom(host: "127.0.0.1", port: 8443), token: nil)
        let byName = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.value) })
        #expect(byName["authorization"] == nil)
        #expect(byName["apns-id"] == nil)
        #expect(byName["apns-collapse-id"] == nil)
        #expect(byName["apns-push-type"] == "voip")
        #expect(byName["apns-topic"] == "com.example.app.voip")
        #expect(byName["apns-expiration"] == "0")
        #expect(byName[":authority"] == "127.0.0.1:8443")
        #expect(byName["content-length"] == "16")
        #expect(fields.filter(\.neverIndex).map(\.name) == [":path"])
    }
}
