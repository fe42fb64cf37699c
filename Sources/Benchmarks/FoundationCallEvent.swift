/// The event as a `Decodable` struct, for `JSONDecoder` (the reference decoder in the json area).
struct FoundationCallEvent: Decodable {
    struct Caller: Decodable {
        var name: String?
        var id: String?
    }

    var eventID: String
    var type: String
    var callID: String
    var deviceToken: String
    var push: String
    var topic: String
    var environment: String
    var createdAt: Int64
    var ringTimeoutSeconds: Int?
    var caller: Caller?

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id"
        case type
        case callID = "call_id"
        case deviceToken = "device_token"
        case push, topic, environment
        case createdAt = "created_at"
        case ringTimeoutSeconds = "ring_timeout_s"
        case caller
    }
}
