@testable import APNs
@testable import APNsMock
import Foundation
@testable import Worker

/// The deterministic generator the fuzz tests use (SplitMix64, shared with the mock APNs server).
typealias SplitMix64 = APNsMockRandom

enum Fixtures {
    static let token = String(repeating: "a1b2c3d4", count: 8)
    static let voipToken = String(repeating: "0f1e2d3c", count: 8)
    static let uuid = "8d7f3c2e-1b4a-4f6e-9a0b-7c6d5e4f3a2b"

    static func eventJSON(
        type: String = "incoming",
        push: String = "alert",
        eventID: String = uuid,
        callID: String = "c-42",
        createdAt: Int64 = 1_764_489_600_123,
        ringTimeout: Int = 30,
        extra: String = ""
    ) -> String {
        """
        {"event_id":"\(eventID)","type":"\(type)","call_id":"\(callID)","device_token":"\(token)",\
        "push":"\(push)","topic":"com.example.app","environment":"production","created_at":\(createdAt),\
        "ring_timeout_s":\(ringTimeout),"caller":{"name":"Alice","id":"u-7"}\(extra)}
        """
    }

    static func event(
        type: CallEventType = .incoming,
        push: CallPushKind = .alert,
        eventID: String = uuid,
        callID: String = "c-42",
        createdAt: Int64 = 1_764_489_600_123,
        ringTimeout: Int = 30,
        caller: CallEvent.Caller = .init(name: "Alice", id: "u-7"),
        alert: CallEvent.AlertText = .init(),
        category: String? = nil,
        sound: String? = nil,
        custom: String? = nil
    ) -> CallEvent {
        var event = try! CallEvent(
            eventID: eventID, type: type, callID: callID,
            deviceToken: try! DeviceToken(push == .voip ? voipToken : token), push: push,
            topic: "com.example.app", environment: .production, createdAtMilliseconds: createdAt,
            ringTimeoutSeconds: ringTimeout, caller: caller, alert: alert, category: category, sound: sound
        )
        if let custom {
            let decoded = try! CallEventDecoder().decode(Array(eventJSON(extra: ",\"custom\":" + custom).utf8))
            event.custom = decoded.custom
        }
        return event
    }

    /// Parses JSON bytes with Foundation (the oracle) into a dictionary.
    static func object(_ bytes: [UInt8]) -> NSDictionary? {
        (try? JSONSerialization.jsonObject(with: Data(bytes), options: [])) as? NSDictionary
    }

    static func object(_ text: String) -> NSDictionary? { object(Array(text.utf8)) }
}
