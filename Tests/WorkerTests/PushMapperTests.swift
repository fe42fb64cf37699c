@testable import APNs
import Foundation
import Testing
@testable import Worker

@Suite struct PushMapperTests {
    let mapper = PushMapper()

    private func payload(_ request: APNsRequest) -> NSDictionary {
        Fixtures.object(request.payload) ?? ["unparseable": String(decoding: request.payload, as: UTF8.self)]
    }

    @Test func incomingAlertGolden() throws {
        let event = Fixtures.event()
        let request = try mapper.map(event)
        #expect(request.pushType == .alert)
        #expect(request.topic == "com.example.app")
        #expect(request.priority == .immediate)
        #expect(request.expiration == .at(secondsSinceEpoch: 1_764_489_600 + 30))
        #expect(request.collapseID == "c-42")
        #expect(request.apnsID == Fixtures.uuid)
        #expect(request.deviceToken.hex == Fixtures.token)
        let expected: NSDictionary = [
            "pushType": 1, "callId": "c-42", "caller": ["name": "Alice", "id": "u-7"],
            "aps": [
                "alert": ["title": "Alice", "body": "Incoming call"], "mutable-content": 1,
                "category": "INCOMING_CALL", "interruption-level": "time-sensitive",
            ],
        ]
        #expect(payload(request) == expected)
        #expect(mapper.skippedCustomKeys(of: event).isEmpty)
    }

    @Test func hangupAlertGolden() throws {
        let push = try mapper.map(Fixtures.event(type: .hangup))
        #expect(push.collapseID == "c-42")
        #expect(push.pushType == .alert)
        #expect(push.expiration == .at(secondsSinceEpoch: 1_764_489_600 + 600))
        let expected: NSDictionary = [
            "pushType": 2, "callId": "c-42", "caller": ["name": "Alice", "id": "u-7"],
            "aps": ["alert": ["title": "Alice", "body": "Call ended"], "mutable-content": 1, "category": "CALL_ENDED"],
        ]
        #expect(payload(push) == expected)
        let missed = try mapper.map(Fixtures.event(type: .missed))
        #expect((payload(missed)["aps"] as? NSDictionary)?["alert"] as? NSDictionary == ["title": "Alice", "body": "Missed call"])
        #expect(payload(missed)["pushType"] as? Int == 2)
    }

    @Test func voipGolden() throws {
        let request = try mapper.map(Fixtures.event(push: .voip))
        #expect(request.pushType == .voip)
        #expect(request.topic == "com.example.app.voip")
        #expect(request.priority == .immediate)
        #expect(request.expiration == .at(secondsSinceEpoch: 1_764_489_630))
        #expect(request.collapseID == nil)
        let expected: NSDictionary = [
            "pushType": 1, "type": "incoming", "callId": "c-42", "eventId": Fixtures.uuid,
            "createdAt": 1_764_489_600_123, "ringDeadline": 1_764_489_630_123,
            "caller": ["name": "Alice", "id": "u-7"],
        ]
        #expect(payload(request) == expected)
        let hangup = try mapper.map(Fixtures.event(type: .hangup, push: .voip))
        #expect(payload(hangup)["pushType"] as? Int == 2)
        #expect(payload(hangup)["type"] as? String == "hangup")
    }

    @Test func eventAlertOverridesAndLocalisation() throws {
        var configuration = MappingConfiguration()
        configuration.alerts[.incoming]!.titleLocKey = "CALL_TITLE"
        configuration.alerts[.incoming]!.locKey = "CALL_BODY"
        configuration.sound = "ring.caf"
        let localised = try PushMapper(configuration: configuration).map(Fixtures.event())
        let aps = payload(localised)["aps"] as! NSDictionary
        #expect(aps["alert"] as? NSDictionary == [
            "title": "Alice", "body": "Incoming call", "title-loc-key": "CALL_TITLE", "title-loc-args": ["Alice"],
            "loc-key": "CALL_BODY", "loc-args": ["Alice"],
        ])
        #expect(aps["sound"] as? String == "ring.caf")

        let event = Fixtures.event(
            caller: .init(), alert: .init(title: "Bob \"B\"\n", subtitle: "work", body: nil), category: "CUSTOM",
            sound: "x.caf")
        let overridden = payload(try PushMapper(configuration: configuration).map(event))
        let overriddenAps = overridden["aps"] as! NSDictionary
        #expect(overriddenAps["alert"] as? NSDictionary == ["title": "Bob \"B\"\n", "subtitle": "work"])
        #expect(overriddenAps["category"] as? String == "CUSTOM")
        #expect(overriddenAps["sound"] as? String == "x.caf")
        #expect(overridden["caller"] == nil)
    }

    @Test func noCallerNameFallsBackToDefaultTitle() throws {
        let event = Fixtures.event(caller: .init(name: nil, id: "u-9"))
        let aps = payload(try mapper.map(event))["aps"] as! NSDictionary
        #expect((aps["alert"] as! NSDictionary)["title"] as? String == "Incoming call")
    }

    @Test func customKeysMergeAtTopLevelAndReservedKeysAreSkipped() throws {
        let event = Fixtures.event(custom: #"{"room":{"id":7},"aps":{"badge":1},"pushType":9,"callId":"x","hd":true}"#)
        let push = try mapper.map(event)
        let body = payload(push)
        #expect(body["room"] as? NSDictionary == ["id": 7])
        #expect(body["hd"] as? Bool == true)
        #expect(body["pushType"] as? Int == 1)
        #expect(body["callId"] as? String == "c-42")
        #expect((body["aps"] as? NSDictionary)?["badge"] == nil)
        #expect(mapper.skippedCustomKeys(of: event) == ["aps", "pushType", "callId"])

        let voip = Fixtures.event(push: .voip, custom: #"{"type":"x","createdAt":1,"extra":"ok"}"#)
        let voipBody = payload(try mapper.map(voip))
        #expect(mapper.skippedCustomKeys(of: voip) == ["type", "createdAt"])
        #expect(voipBody["extra"] as? String == "ok")
        #expect(voipBody["type"] as? String == "incoming")

        var strict = MappingConfiguration()
        strict.rejectReservedCustomKeys = true
        #expect(throws: PushMappingError.self) { try PushMapper(configuration: strict).map(event) }
        let plain = Fixtures.event(custom: #"{"ok":1}"#)
        _ = try PushMapper(configuration: strict).map(plain)
        #expect(PushMapper(configuration: strict).skippedCustomKeys(of: plain) == [])
    }

    @Test func oversizedPayloadsAreRefused() throws {
        let big = String(repeating: "x", count: 4200)
        do {
            _ = try mapper.map(Fixtures.event(custom: "{\"blob\":\"\(big)\"}"))
            Issue.record("expected payload_too_large")
        } catch {
            #expect(error.code == .payloadTooLarge)
            #expect(error.underlying?.code == .payloadTooLarge)
        }
        // The same blob fits the 5120-byte VoIP limit.
        #expect(try mapper.map(Fixtures.event(push: .voip, custom: "{\"blob\":\"\(big)\"}")).payload.count > 4096)
        let bigger = String(repeating: "y", count: 5200)
        #expect(throws: PushMappingError.self) { try mapper.map(Fixtures.event(push: .voip, custom: "{\"b\":\"\(bigger)\"}")) }
    }

    @Test func requestRules() throws {
        #expect(try mapper.map(Fixtures.event(eventID: "8D7F3C2E-1B4A-4F6E-9A0B-7C6D5E4F3A2B")).apnsID == Fixtures.uuid)
        #expect(try mapper.map(Fixtures.event(eventID: "evt-1")).apnsID == nil)
        do {
            _ = try mapper.map(Fixtures.event(callID: String(repeating: "c", count: 65)))
            Issue.record("expected bad_collapse_id")
        } catch {
            #expect(error.code == .badCollapseID)
        }
        var configuration = MappingConfiguration()
        configuration.allowedBundleIDs = ["com.other.app"]
        #expect(throws: PushMappingError.self) { try PushMapper(configuration: configuration).map(Fixtures.event()) }
        configuration.bundleIDOverride = "com.other.app"
        #expect(try PushMapper(configuration: configuration).map(Fixtures.event(push: .voip)).topic == "com.other.app.voip")
        configuration.expireAtRingDeadline = false
        #expect(try PushMapper(configuration: configuration).map(Fixtures.event()).expiration == .none)
    }

    @Test func encoderAgreesWithFoundationOnRandomStrings() throws {
        var random = SplitMix64(seed: 42)
        let pool: [Character] = ["a", "Z", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "😀", "日", " ", "\u{2028}"]
        for _ in 0..<300 {
            let text = String((0..<Int.random(in: 0...20, using: &random)).map { _ in pool.randomElement(using: &random)! })
            let event = Fixtures.event(
                callID: String(text.prefix(10)) + "c", caller: .init(name: text, id: text),
                alert: .init(title: text, subtitle: nil, body: text))
            let body = payload(try mapper.map(event))
            #expect((body["caller"] as? NSDictionary)?["name"] as? String == text)
            #expect(((body["aps"] as? NSDictionary)?["alert"] as? NSDictionary)?["body"] as? String == text)
            #expect(body["callId"] as? String == event.callID)
        }
    }

    /// The configured texts are written as JSON strings once, when the mapper is made: they read back as configured.
    @Test func configuredTextsAgreeWithFoundationOnRandomStrings() throws {
        var random = SplitMix64(seed: 7)
        let pool: [Character] = ["a", "Z", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "é", "😀", " ", "\u{2028}"]
        func text() -> String {
            String((0..<Int.random(in: 0...12, using: &random)).map { _ in pool.randomElement(using: &random)! })
        }
        for _ in 0..<100 {
            var configuration = MappingConfiguration()
            let defaults = (title: text(), subtitle: text(), body: text(), titleLocKey: text(), locKey: text(),
                            category: text(), level: text(), sound: text())
            configuration.alerts[.incoming] = MappingConfiguration.AlertDefaults(
                title: defaults.title, body: defaults.body, interruptionLevel: defaults.level, category: defaults.category)
            configuration.alerts[.incoming]!.subtitle = defaults.subtitle
            configuration.alerts[.incoming]!.titleLocKey = defaults.titleLocKey
            configuration.alerts[.incoming]!.locKey = defaults.locKey
            configuration.sound = defaults.sound
            let body = payload(try PushMapper(configuration: configuration).map(Fixtures.event(caller: .init())))
            let aps = try #require(body["aps"] as? NSDictionary)
            #expect(aps["alert"] as? NSDictionary == [
                "title": defaults.title, "subtitle": defaults.subtitle, "body": defaults.body,
                "title-loc-key": defaults.titleLocKey, "loc-key": defaults.locKey,
            ])
            #expect(aps["category"] as? String == defaults.category)
            #expect(aps["interruption-level"] as? String == defaults.level)
            #expect(aps["sound"] as? String == defaults.sound)
        }
    }
}
