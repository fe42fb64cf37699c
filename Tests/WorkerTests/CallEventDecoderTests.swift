@testable import APNs
import Foundation
import Testing
@testable import Worker

@Suite struct CallEventDecoderTests {
    let decoder = CallEventDecoder()

    private func decode(_ text: String) throws(EventDecodingError) -> CallEvent {
        try decoder.decode(Array(text.utf8))
    }

    private func failure(_ text: String) -> String? {
        do {
            _ = try decode(text)
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    @Test func decodesTheDesignExample() throws {
        let text = """
            {
              "event_id": "8D7F3C2E-1B4A-4F6E-9A0B-7C6D5E4F3A2B",
              "type": "incoming", "call_id": "c-42",
              "device_token": "\(Fixtures.token.uppercased())",
              "push": "alert", "topic": "com.example.app", "environment": "production",
              "created_at": 1764489600123, "ring_timeout_s": 30,
              "caller": { "name": "Alice", "id": "u-7" },
              "alert": { "title": "T", "subtitle": "S", "body": "B" },
              "category": "INCOMING_CALL", "sound": null,
              "custom": { "room": {"id": 7, "tags": ["a", "b"]}, "hd": true }
            }
            """
        let event = try decode(text)
        #expect(event.eventID == "8D7F3C2E-1B4A-4F6E-9A0B-7C6D5E4F3A2B")
        #expect(event.type == .incoming)
        #expect(event.callID == "c-42")
        #expect(event.deviceToken.hex == Fixtures.token)
        #expect(event.push == .alert)
        #expect(event.environment == .production)
        #expect(event.createdAtMilliseconds == 1_764_489_600_123)
        #expect(event.ringTimeoutSeconds == 30)
        #expect(event.ringDeadlineMilliseconds == 1_764_489_630_123)
        #expect(event.caller == .init(name: "Alice", id: "u-7"))
        #expect(event.alert == .init(title: "T", subtitle: "S", body: "B"))
        #expect(event.category == "INCOMING_CALL")
        #expect(event.sound == nil)
        #expect(event.custom.members.map(\.key) == ["room", "hd"])
        #expect(String(decoding: event.custom["room"]!, as: UTF8.self) == #"{"id": 7, "tags": ["a", "b"]}"#)
        #expect(ReferenceEventDecoder.fast(Array(text.utf8)) == ReferenceEventDecoder.decode(Array(text.utf8)))
    }

    @Test func stopRingingTypesAreAccepted() throws {
        for type in ["hangup", "missed", "answered_elsewhere"] {
            let event = try decode(Fixtures.eventJSON(type: type))
            #expect(event.type.stopsRinging)
        }
        #expect(try decode(Fixtures.eventJSON()).type.stopsRinging == false)
    }

    @Test func escapesAndUnicode() throws {
        let event = try decode(
            Fixtures.eventJSON(extra: #","alert":{"title":"\u00e9\ud83d\ude00\n\"q\"\\\/\b\f\r\t","body":"日本語"}"#)
        )
        #expect(event.alert.title == "é😀\n\"q\"\\/\u{8}\u{c}\r\t")
        #expect(event.alert.body == "日本語")
    }

    @Test func nullOptionalsAndDefaultRingTimeout() throws {
        let text = """
            {"event_id":"e","type":"hangup","call_id":"c","device_token":"\(Fixtures.token)","push":"voip",\
            "topic":"t","environment":"sandbox","created_at":1,"ring_timeout_s":null,"caller":null,"alert":null,\
            "category":null,"sound":null,"custom":null,"unknown":[1,{"x":null}]}
            """
        let event = try decode(text)
        #expect(event.ringTimeoutSeconds == 30)
        #expect(event.caller == .init())
        #expect(event.custom.isEmpty)
        #expect(event.environment == .sandbox)
    }

    @Test func wholeNumbersInAnyNotation() throws {
        #expect(try decode(Fixtures.eventJSON(extra: #","ring_timeout_s":3e1"#)).ringTimeoutSeconds == 30)
        #expect(try decode(Fixtures.eventJSON(extra: #","ring_timeout_s":45.0"#)).ringTimeoutSeconds == 45)
    }

    @Test(arguments: [
        ("{", "invalid_json"),
        ("", "invalid_json"),
        ("{\"a\":1,}", "invalid_json"),
        ("{\"a\":01}", "invalid_json"),
        ("{\"a\":\"\\ud800\"}", "invalid_json"),
        ("{\"a\":\"\\udc00\"}", "invalid_json"),
        ("{\"a\":\"\\x\"}", "invalid_json"),
        ("{\"a\":\"\u{01}\"}", "invalid_json"),
        ("{\"a\":1e400}", "invalid_json"),
        ("{} x", "invalid_json"),
        ("[1,2]", "not_an_object"),
        ("\"text\"", "not_an_object"),
        ("{}", "missing_field:event_id"),
    ])
    func syntaxFailures(text: String, code: String) {
        #expect(failure(text) == code)
    }

    @Test func invalidUTF8IsInvalidJSON() {
        var bytes = Array(Fixtures.eventJSON().utf8)
        bytes.insert(0xFF, at: bytes.firstIndex(of: UInt8(ascii: "A"))!)
        #expect(throws: EventDecodingError.self) { try decoder.decode(bytes) }
        #expect(ReferenceEventDecoder.fast(bytes) == .failure("invalid_json"))
    }

    @Test func everyFieldReason() {
        let base = Fixtures.eventJSON()
        func replacing(_ key: String, with value: String) -> String {
            // The fixture has each key once; replace its value by appending a later duplicate (last wins).
            String(base.dropLast()) + ",\"\(key)\":\(value)}"
        }
        let cases: [(String, String)] = [
            (replacing("event_id", with: "null"), "missing_field:event_id"),
            (replacing("event_id", with: "1"), "wrong_type:event_id"),
            (replacing("event_id", with: "\"\""), "empty_field:event_id"),
            (replacing("type", with: "\"ringing\""), "unknown_type"),
            (replacing("type", with: "[]"), "wrong_type:type"),
            (replacing("call_id", with: "null"), "missing_field:call_id"),
            (replacing("call_id", with: "\"\""), "empty_field:call_id"),
            (replacing("device_token", with: "\"xyz\""), "bad_device_token"),
            (replacing("device_token", with: "\"abc\""), "bad_device_token"),
            (replacing("push", with: "\"sms\""), "unknown_push"),
            (replacing("topic", with: "\"\""), "empty_field:topic"),
            (replacing("environment", with: "\"staging\""), "unknown_environment"),
            (replacing("created_at", with: "null"), "missing_field:created_at"),
            (replacing("created_at", with: "\"1\""), "wrong_type:created_at"),
            (replacing("created_at", with: "1.5"), "wrong_type:created_at"),
            (replacing("created_at", with: "true"), "wrong_type:created_at"),
            (replacing("created_at", with: "99999999999999999999"), "bad_created_at"),
            (replacing("created_at", with: "-1e300"), "bad_created_at"),
            (replacing("ring_timeout_s", with: "1e20"), "bad_ring_timeout"),
            (replacing("created_at", with: "-1"), "bad_created_at"),
            (replacing("created_at", with: "253402300800000"), "bad_created_at"),
            (replacing("created_at", with: "1764489600123000"), "bad_created_at"),
            (replacing("ring_timeout_s", with: "0"), "bad_ring_timeout"),
            (replacing("ring_timeout_s", with: "601"), "bad_ring_timeout"),
            (replacing("ring_timeout_s", with: "\"30\""), "wrong_type:ring_timeout_s"),
            (replacing("caller", with: "\"Alice\""), "wrong_type:caller"),
            (replacing("caller", with: "{\"name\":7}"), "wrong_type:caller.name"),
            (replacing("caller", with: "{\"id\":false}"), "wrong_type:caller.id"),
            (replacing("alert", with: "[]"), "wrong_type:alert"),
            (replacing("alert", with: "{\"title\":1}"), "wrong_type:alert.title"),
            (replacing("alert", with: "{\"subtitle\":{}}"), "wrong_type:alert.subtitle"),
            (replacing("alert", with: "{\"body\":[]}"), "wrong_type:alert.body"),
            (replacing("category", with: "1"), "wrong_type:category"),
            (replacing("sound", with: "{}"), "wrong_type:sound"),
            (replacing("custom", with: "[]"), "wrong_type:custom"),
        ]
        for (text, code) in cases {
            #expect(failure(text) == code, "\(text)")
            #expect(ReferenceEventDecoder.decode(Array(text.utf8)) == .failure(code), "oracle: \(text)")
        }
        for field in ["event_id", "type", "call_id", "device_token", "push", "topic", "environment", "created_at"] {
            let object = Fixtures.object(base)!.mutableCopy() as! NSMutableDictionary
            object.removeObject(forKey: field)
            let text = String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            #expect(failure(text) == "missing_field:" + field)
        }
    }

    @Test func limits() {
        var configuration = CallEventDecoder.Configuration()
        configuration.maximumEventSize = 100
        let small = CallEventDecoder(configuration: configuration)
        #expect(ReferenceEventDecoder.fast(Array(Fixtures.eventJSON().utf8), small) == .failure("event_too_large"))
        let deep = Fixtures.eventJSON(extra: ",\"custom\":{\"a\":" + String(repeating: "[", count: 40)
            + String(repeating: "]", count: 40) + "}")
        #expect(failure(deep) == "nesting_too_deep")
    }

    @Test func duplicateKeysLastWinsLikeFoundation() throws {
        let text = Fixtures.eventJSON(extra: #","call_id":"c-43","custom":{"a":1,"b":2,"a":3}"#)
        let event = try decode(text)
        #expect(event.callID == "c-43")
        #expect(event.custom.members.map(\.key) == ["a", "b"])
        #expect(event.custom["a"] == Array("3".utf8))
        #expect(ReferenceEventDecoder.fast(Array(text.utf8)) == ReferenceEventDecoder.decode(Array(text.utf8)))
    }
}

