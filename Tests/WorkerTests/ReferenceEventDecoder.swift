@testable import APNs
import Foundation
@testable import Worker

/// The oracle: the same event rules as `CallEventDecoder`, written on top of Foundation's JSONSerialization.
enum ReferenceEventDecoder {
    enum Outcome: Equatable, CustomStringConvertible {
        case event(CallEvent, custom: NSDictionary?)
        case failure(String)

        static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            switch (lhs, rhs) {
            case (.failure(let a), .failure(let b)): return a == b
            case (.event(var a, let ac), .event(var b, let bc)):
                guard (ac ?? [:]).isEqual(bc ?? [:]) else { return false }
                a.custom = CustomFields()
                b.custom = CustomFields()
                return a == b
            default: return false
            }
        }

        var description: String {
            switch self {
            case .event(let event, let custom): "event(\(event.eventID) \(event.type) custom=\(String(describing: custom)))"
            case .failure(let code): "failure(\(code))"
            }
        }
    }

    /// The fast decoder's result in the same shape.
    static func fast(_ bytes: [UInt8], _ decoder: CallEventDecoder = CallEventDecoder()) -> Outcome {
        do {
            let event = try decoder.decode(bytes)
            let custom = event.custom.isEmpty ? nil : Fixtures.object(event.custom.jsonText)
            return .event(event, custom: custom)
        } catch {
            return .failure(error.code.rawValue)
        }
    }

    static func decode(_ bytes: [UInt8], _ configuration: CallEventDecoder.Configuration = .init()) -> Outcome {
        guard bytes.count <= configuration.maximumEventSize else { return .failure("event_too_large") }
        guard let any = try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) else {
            return .failure("invalid_json")
        }
        guard let object = any as? [String: Any] else { return .failure("not_an_object") }
        do {
            func string(_ value: Any?, _ name: String, required: Bool, allowEmpty: Bool = true) throws -> String? {
                guard let value, !(value is NSNull) else {
                    if required { throw Failure("missing_field:" + name) }
                    return nil
                }
                guard let text = value as? String else { throw Failure("wrong_type:" + name) }
                if !allowEmpty && text.isEmpty { throw Failure("empty_field:" + name) }
                return text
            }
            func integer(_ value: Any?, _ name: String) throws -> Int64? {
                guard let value, !(value is NSNull) else { return nil }
                guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else {
                    throw Failure("wrong_type:" + name)
                }
                // A whole number too large for Int64 saturates: it is out of the field's range, not of the wrong type.
                let type = String(cString: number.objCType)
                if type == "d" || type == "f" {
                    let double = number.doubleValue
                    guard double.rounded(.towardZero) == double else { throw Failure("wrong_type:" + name) }
                    return double >= 0x1p63 ? .max : double < -0x1p63 ? .min : Int64(double)
                }
                return type == "Q" ? .max : number.int64Value
            }
            func dictionary(_ value: Any?, _ name: String) throws -> [String: Any]? {
                guard let value, !(value is NSNull) else { return nil }
                guard let dictionary = value as? [String: Any] else { throw Failure("wrong_type:" + name) }
                return dictionary
            }
            let eventID = try string(object["event_id"], "event_id", required: true, allowEmpty: false)!
            guard let type = CallEventType(rawValue: try string(object["type"], "type", required: true)!) else {
                throw Failure("unknown_type")
            }
            let callID = try string(object["call_id"], "call_id", required: true, allowEmpty: false)!
            let tokenText = try string(object["device_token"], "device_token", required: true)!
            guard let token = try? DeviceToken(tokenText) else { throw Failure("bad_device_token") }
            guard let push = CallPushKind(rawValue: try string(object["push"], "push", required: true)!) else {
                throw Failure("unknown_push")
            }
            let topic = try string(object["topic"], "topic", required: true, allowEmpty: false)!
            guard
                let environment = CallEnvironment(
                    rawValue: try string(object["environment"], "environment", required: true)!
                )
            else { throw Failure("unknown_environment") }
            guard let createdAt = try integer(object["created_at"], "created_at") else {
                throw Failure("missing_field:created_at")
            }
            guard createdAt >= 0, createdAt <= 253_402_300_799_999 else { throw Failure("bad_created_at") }
            var ringTimeout = Int(configuration.defaultRingTimeout.components.seconds)
            if let value = try integer(object["ring_timeout_s"], "ring_timeout_s") {
                guard value >= Int64(configuration.ringTimeoutRange.lowerBound),
                    value <= Int64(configuration.ringTimeoutRange.upperBound)
                else { throw Failure("bad_ring_timeout") }
                ringTimeout = Int(value)
            }
            let caller = try dictionary(object["caller"], "caller") ?? [:]
            let callerValue = CallEvent.Caller(
                name: try string(caller["name"], "caller.name", required: false),
                id: try string(caller["id"], "caller.id", required: false)
            )
            let alert = try dictionary(object["alert"], "alert") ?? [:]
            let alertValue = CallEvent.AlertText(
                title: try string(alert["title"], "alert.title", required: false),
                subtitle: try string(alert["subtitle"], "alert.subtitle", required: false),
                body: try string(alert["body"], "alert.body", required: false)
            )
            let category = try string(object["category"], "category", required: false)
            let sound = try string(object["sound"], "sound", required: false)
            let custom = try dictionary(object["custom"], "custom")
            let event = try CallEvent(
                eventID: eventID, type: type, callID: callID, deviceToken: token, push: push, topic: topic,
                environment: environment, createdAtMilliseconds: createdAt, ringTimeoutSeconds: ringTimeout,
                caller: callerValue, alert: alertValue, category: category, sound: sound
            )
            return .event(event, custom: (custom?.isEmpty ?? true) ? nil : custom! as NSDictionary)
        } catch let failure as Failure {
            return .failure(failure.code)
        } catch {
            return .failure("unexpected")
        }
    }

    struct Failure: Error {
        let code: String
        init(_ code: String) { self.code = code }
    }
}
