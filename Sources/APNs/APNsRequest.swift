import Telemetry

/// One push: everything APNs needs for `POST /3/device/<token>`.
///
/// Build it with ``init(deviceToken:pushType:topic:payload:priority:expiration:collapseID:apnsID:)``, which
/// checks every field against APNs' rules so a request that APNs would reject for its shape never leaves.
///
/// A value kept inside the push that carries it (``APNsPush/request``): made once by the mapper and moved into the
/// push, never copied on the way, so it needs no allocation of its own.
public struct APNsRequest: Sendable {
    public let deviceToken: DeviceToken
    public let pushType: APNsPushType
    /// The full `apns-topic`, suffix included (e.g. `com.example.app.voip`).
    public let topic: String
    let priority: APNsPriority
    let expiration: APNsExpiration
    /// `apns-collapse-id`, at most 64 bytes.
    let collapseID: String?
    /// `apns-id`, a lowercase canonical UUID; APNs makes one up when nil.
    public let apnsID: String?
    /// The JSON payload bytes.
    public let payload: [UInt8]
    /// `:path` for this request: the device token's (``DeviceToken/path``), made when the token was read.
    public var path: String { deviceToken.path }

    public static let maximumCollapseIDSize = 64

    public init(
        deviceToken: DeviceToken,
        pushType: APNsPushType,
        topic: String,
        payload: [UInt8],
        priority: APNsPriority = .immediate,
        expiration: APNsExpiration = .none,
        collapseID: String? = nil,
        apnsID: String? = nil
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
        if let apnsID, !Self.isCanonicalUUID(apnsID) {
            throw APNsRequestError(.badMessageID, "apns-id must be a lowercase canonical UUID")
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
        self.apnsID = apnsID
        self.payload = payload
    }

    /// True for `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase hex.
    public static func isCanonicalUUID(_ text: String) -> Bool {
        isCanonicalUUID(text, allowingUppercase: false)
    }

    /// True for `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in hex digits, lowercase only unless `allowingUppercase`.
    /// Reads the contiguous UTF-8 in place (no copy for a native string): the dashes, then five 8-byte words with
    /// ``HexDigits`` (bytes 0, 8, 16, 24 and 28 on, the dashes turned into `0` digits). The worker checks every event
    /// id twice (on the record's bytes when mapping, then in this initialiser).
    static func isCanonicalUUID(_ text: String, allowingUppercase: Bool) -> Bool {
        guard text.utf8.count == 36 else { return false }
        return text.withUTF8InPlace { isCanonicalUUID(utf8: $0, allowingUppercase: allowingUppercase) }
    }

    /// ``isCanonicalUUID(_:allowingUppercase:)`` over UTF-8 bytes.
    package static func isCanonicalUUID(utf8 bytes: UnsafeBufferPointer<UInt8>, allowingUppercase: Bool) -> Bool {
        guard bytes.count == 36 else { return false }
        let dash = UInt8(ascii: "-")
        guard bytes[8] == dash, bytes[13] == dash, bytes[18] == dash, bytes[23] == dash else { return false }
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        func word(at offset: Int) -> UInt64 {
            UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        let dashToZero = UInt64(dash ^ UInt8(ascii: "0"))
        var digits = HexDigits()
        digits.add(word: word(at: 0))
        digits.add(word: word(at: 8) ^ (dashToZero | dashToZero << 40))  // bytes 8 and 13
        digits.add(word: word(at: 16) ^ (dashToZero << 16 | dashToZero << 56))  // bytes 18 and 23
        digits.add(word: word(at: 24))
        digits.add(word: word(at: 28))
        return digits.allHex && (allowingUppercase || !digits.hasUppercase)
    }
}
