import Telemetry

/// One push: everything APNs needs for `POST /3/device/<token>`.
///
/// Build it with ``init(deviceToken:pushType:topic:payload:priority:expiration:collapseID:apnsID:)``, which
/// checks every field against APNs' rules so a request that APNs would reject for its shape never leaves.
///
/// A value kept inside the push that carries it (``APNsPush/request``): made once by the mapper and moved into the
/// push, never copied on the way, so it needs no allocation of its own.
public struct APNsRequest: Sendable {
    package let deviceToken: DeviceToken
    package let pushType: APNsPushType
    /// The full `apns-topic`, suffix included (e.g. `com.example.app.voip`).
    package let topic: String
    let priority: APNsPriority
    let expiration: APNsExpiration
    /// `apns-collapse-id`, at most 64 bytes.
    let collapseID: String?
    /// `apns-id`; APNs makes one up when nil.
    package let id: APNsID?
    /// ``id``'s text (lowercase).
    package var apnsID: String? { id?.description }
    /// The JSON payload bytes.
    package let payload: [UInt8]
    /// `:path` for this request: the device token's (``DeviceToken/path``).
    package var path: String { deviceToken.path }

    package static let maximumCollapseIDSize = 64

    package init(
        deviceToken: DeviceToken,
        pushType: APNsPushType,
        topic: String,
        payload: [UInt8],
        priority: APNsPriority = .immediate,
        expiration: APNsExpiration = .none,
        collapseID: String? = nil,
        apnsID: APNsID? = nil
    ) throws(APNsRequestError) {
        guard !topic.isEmpty else { throw APNsRequestError(.missingTopic, "apns-topic is empty") }
        if let suffix = pushType.topicSuffix, !suffix.isEmpty, !topic.hasSuffix(suffix) {
            throw APNsRequestError(.badTopic, "push type \(pushType) needs a topic ending in \(suffix), got \(topic)")
        }
        guard pushType.allows(priority) else {
            throw APNsRequestError(.badPriority, "priority \(priority) is not allowed for push type \(pushType)")
        }
        if let collapseID, collapseID.utf8.count > Self.maximumCollapseIDSize {
            throw APNsRequestError(
                .badCollapseID,
                "apns-collapse-id is \(collapseID.utf8.count) bytes, at most \(Self.maximumCollapseIDSize) allowed"
            )
        }
        if case .at(let seconds) = expiration, seconds < 0 {
            throw APNsRequestError(.badExpiration, "apns-expiration must not be negative")
        }
        guard !payload.isEmpty else { throw APNsRequestError(.payloadEmpty, "payload is empty") }
        guard payload.count <= pushType.maximumPayloadSize else {
            throw APNsRequestError(
                .payloadTooLarge,
                "payload is \(payload.count) bytes, \(payload.count - pushType.maximumPayloadSize) over the \(pushType.maximumPayloadSize)-byte limit for \(pushType)"
            )
        }
        self.deviceToken = deviceToken
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.id = apnsID
        self.payload = payload
    }
}
