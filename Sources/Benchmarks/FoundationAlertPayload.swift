import Worker

/// The incoming-call alert payload as an `Encodable` struct, for `JSONEncoder` (a reference encoder in the json
/// area): the members ``PushMapper`` writes with default settings.
struct FoundationAlertPayload: Encodable {
    struct Caller: Encodable {
        var name: String?
        var id: String?
    }

    struct Alert: Encodable {
        var title: String
        var body: String
    }

    struct APS: Encodable {
        var alert: Alert
        var mutableContent = 1
        var category = "INCOMING_CALL"
        var interruptionLevel = "time-sensitive"

        enum CodingKeys: String, CodingKey {
            case alert
            case mutableContent = "mutable-content"
            case category
            case interruptionLevel = "interruption-level"
        }
    }

    var pushType: Int
    var callId: String
    var caller: Caller
    var aps: APS

    init(_ event: CallEvent) {
        pushType = event.type == .incoming ? 1 : 2
        callId = event.callID
        caller = Caller(name: event.caller.name, id: event.caller.id)
        aps = APS(alert: Alert(title: event.caller.name ?? "Incoming call", body: "Incoming call"))
    }
}
