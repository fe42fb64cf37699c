import Foundation
import Worker

/// A call event as docs/integration.md ("Call event") describes it (an incoming alert call with a caller) and what Foundation needs to decode it and
/// to encode its alert payload.
enum JSONFixture {
    static let eventJSON = #"{"event_id":"8d7f3c2e-1b4a-4f6e-9a0b-7c6d5e4f3a2b","type":"incoming","call_id":"c-42","device_token":"a1b2c3d4a1b2c3d4a1b2c3d4a1b2c3d4a1b2c3d4a1b2c3d4a1b2c3d4a1b2c3d4","push":"alert","topic":"com.example.app","environment":"production","created_at":1764489600123,"ring_timeout_s":30,"caller":{"name":"Alice","id":"u-7"}}"#

    static let eventBytes = Array(eventJSON.utf8)

    /// The alert payload as Foundation objects, built from the decoded event the way an encoder would:
    /// the same members ``PushMapper`` writes for an incoming alert with default settings.
    static func payloadObject(_ event: CallEvent) -> [String: Any] {
        var caller: [String: Any] = [:]
        if let name = event.caller.name { caller["name"] = name }
        if let id = event.caller.id { caller["id"] = id }
        return [
            "pushType": event.type == .incoming ? 1 : 2,
            "callId": event.callID,
            "caller": caller,
            "aps": [
                "alert": ["title": event.caller.name ?? "Incoming call", "body": "Incoming call"],
                "mutable-content": 1,
                "category": "INCOMING_CALL",
                "interruption-level": "time-sensitive",
            ] as [String: Any],
        ]
    }
}
