internal import APNs
import Glibc
import HTTP2
internal import Telemetry
import Synchronization

/// Decides APNs' answer to one request, the way Apple validates (the rules are tabled in docs/apns.md), plus
/// injected faults.
///
/// Checks, in this order (the first failure answers):
/// 1. `:method` is POST, else `405 MethodNotAllowed`.
/// 2. `:path` is `/3/device/<token>`, else `404 BadPath`; an empty token is `400 MissingDeviceToken`.
/// 3. No regular header appears twice, else `400 DuplicateHeaders`.
/// 4. The token is an even number (16–200) of hex digits, else `400 BadDeviceToken`.
/// 5. A connection whose TLS handshake verified a client certificate is certificate auth: `authorization` is ignored,
///    and with registered certificates (``APNsMockConfiguration/clientCertificates``) one that is not registered gets
///    `403 BadCertificate`. On other connections, token auth only: `authorization` present (`403 MissingProviderToken`); `bearer <JWT>` with `alg` ES256, a
///    known `kid`, `iss` = team, integer `iat` not too far in the future, and a valid signature (raw r‖s or DER, both
///    of which APNs accepts), else `403 InvalidProviderToken`; `iat` at most an hour old, else
///    `403 ExpiredProviderToken`; the same `kid` as the connection's first token, else `403 UnrelatedKeyIdInToken`;
///    a new token at least 20 minutes after the connection's previous one, else `429 TooManyProviderTokenUpdates`.
///    A token is decoded and its signature verified once per connection, when the connection first uses it (APNs
///    binds the key on the first push); later requests carrying the same `authorization` value only have its age
///    and the update rules checked. ``APNsMockConfiguration/Authentication/unverifiedProviderToken`` checks all of
///    this except the key and the signature.
/// 6. `apns-push-type` is known (absent means `alert`), else `400 InvalidPushType`.
/// 7. `apns-topic` present (`400 MissingTopic`; with certificate auth and exactly one allowed bundle ID it defaults
///    to that, like a single-topic certificate), well formed (`400 BadTopic`), for an allowed bundle ID
///    (`400 TopicDisallowed`), and with a registered certificate for one of its bundle IDs (`400 TopicDisallowed`:
///    a certificate covers one app, so pushing to another app's topic is not allowed).
/// 8. The topic's suffix matches the push type (`.voip` for voip, none for alert, …), else
///    `400 DeviceTokenNotForTopic`. Choice: a VoIP token pushed on the bare bundle topic (or an alert token on
///    `.voip`) is a token that is not registered for that topic, which is what APNs answers in practice.
/// 9. `apns-priority` is 1, 5 or 10 and allowed for the push type (background: 5 only), else `400 BadPriority`.
/// 10. `apns-expiration` is a non-negative integer, else `400 BadExpirationDate`.
/// 11. `apns-collapse-id` is at most 64 bytes, else `400 BadCollapseId`.
/// 12. `apns-id` is a canonical UUID (either case), else `400 BadMessageId`.
/// 13. The body is not empty (`400 PayloadEmpty`), at most 4096 bytes (5120 for voip) (`413 PayloadTooLarge`), and a
///     JSON object, else `400 PayloadEmpty`. Choice: Apple documents no reason for malformed JSON; `PayloadEmpty`
///     ("no usable payload") is the closest documented one.
/// 14. Faults (``APNsMockFaults``): bad tokens, unregistered tokens, then random drop/stall/429/500/503.
final class APNsMockValidator: Sendable {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    package let configuration: APNsMockConfiguration
    package let faults: APNsMockFaultInjector
    package let recorder: APNsMockRecorder
    /// Every allowed bundle ID with every known topic suffix (and none), by length (a topic has at most 255 bytes):
    /// with allowed bundle IDs, the topic checks are an index and a comparison or two.
    private let allowedTopics: [[AllowedTopic]]
    /// Every push type APNs documents, with what the checks need of it.
    private let pushTypes: [KnownPushType]
    private let alert: KnownPushType
    /// The time rules in seconds (`Duration` arithmetic is not free on the per-request path).
    let maximumTokenClockSkew: Double
    let maximumTokenAge: Double
    let minimumTokenUpdateInterval: Double
    private let ids = APNsMockIDGenerator()

    /// An allowed topic: its bytes, its push-type suffix and whether it is well formed.
    private struct AllowedTopic {
        let bytes: [UInt8]
        let suffix: String
        let wellFormed: Bool
    }

    /// A push type as its `apns-push-type` bytes, its topic suffix, its payload limit and the priorities it allows
    /// (a class: passed around per request without copying its fields).
    private final class KnownPushType: Sendable {
        let type: APNsPushType
        let bytes: [UInt8]
        /// nil for mdm, whose topic comes from the certificate.
        let topicSuffix: String?
        let isMDM: Bool
        let payloadLimit: Int
        /// Bit `p` set: priority `p` is allowed.
        let allowedPriorities: UInt16

        init(_ type: APNsPushType, maximumPayloadBytes: Int?) {
            self.type = type
            bytes = Array(type.rawValue.utf8)
            topicSuffix = type.topicSuffix
            isMDM = type == .mdm
            payloadLimit = min(type.maximumPayloadSize, maximumPayloadBytes ?? Int.max)
            var allowed: UInt16 = 0
            for value in [1, 5, 10] where type.allows(APNsPriority(rawValue: value)!) { allowed |= 1 << UInt16(value) }
            allowedPriorities = allowed
        }
    }

    init(
        configuration: APNsMockConfiguration = APNsMockConfiguration(),
        faults: APNsMockFaultInjector = APNsMockFaultInjector(),
        recorder: APNsMockRecorder = APNsMockRecorder()
    ) {
        self.configuration = configuration
        self.faults = faults
        self.recorder = recorder
        var topics = [[AllowedTopic]](repeating: [], count: configuration.allowedBundleIDs.isEmpty ? 0 : 256)
        for bundleID in configuration.allowedBundleIDs {
            for suffix in [""] + Self.knownSuffixes {
                let topic = Array((bundleID + suffix).utf8)
                guard topic.count < topics.count else { continue }  // too long to be well formed: never allowed
                topic.withUnsafeBufferPointer { bytes in
                    topics[bytes.count].append(AllowedTopic(bytes: topic, suffix: Self.suffix(of: bytes),
                                                            wellFormed: Self.isWellFormedTopic(bytes)))
                }
            }
        }
        allowedTopics = topics
        pushTypes = APNsPushType.all.map { KnownPushType($0, maximumPayloadBytes: configuration.maximumPayloadBytes) }
        alert = KnownPushType(.alert, maximumPayloadBytes: configuration.maximumPayloadBytes)
        maximumTokenClockSkew = configuration.maximumTokenClockSkew.inSeconds
        maximumTokenAge = configuration.maximumTokenAge.inSeconds
        minimumTokenUpdateInterval = configuration.minimumTokenUpdateInterval.inSeconds
    }

    /// The full decision for one stream: validation, faults, latency, GOAWAY; recorded in ``recorder``.
    func handle(_ request: APNsMockRequest, connection: APNsMockConnectionState) -> APNsMockDecision {
        let streamNumber = connection.streams.wrappingAdd(1, ordering: .relaxed).newValue
        let decision = request.fields.withFields { bytes -> APNsMockDecision in
            let fields = APNsMockHeaderFields(bytes)
            let apnsID = responseID(fields)
            let validToken: Bytes
            switch check(fields, body: request.body, connection: connection) {
            case .failure(let rejection): return APNsMockDecision(action: .respond(response(rejection, apnsID: apnsID)))
            case .success(let token): validToken = token
            }
            let fault = faults.decide(token: validToken)
            var decision = APNsMockDecision(action: .respond(success(apnsID: apnsID)), delay: fault.delay)
            switch fault.outcome {
            case .none: break
            case .badDeviceToken: decision.action = .respond(response(.init(400, .badDeviceToken), apnsID: apnsID))
            case .unregistered(let timestamp):
                let milliseconds = timestamp ?? configuration.clock.now().milliseconds
                decision.action = .respond(response(.init(410, .unregistered, timestamp: milliseconds), apnsID: apnsID))
            case .tooManyRequests: decision.action = .respond(response(.init(429, .tooManyRequests), apnsID: apnsID))
            case .internalServerError:
                decision.action = .respond(response(.init(500, .internalServerError), apnsID: apnsID))
            case .serviceUnavailable:
                decision.action = .respond(response(.init(503, .serviceUnavailable), apnsID: apnsID))
            case .stall: decision.action = .stall
            case .dropConnection: decision.action = .dropConnection
            }
            if let limit = fault.goAwayAfterStreams, limit > 0, streamNumber >= limit {
                let first = connection.state.withLock { state -> Bool in
                    defer { state.goAwaySent = true }
                    return !state.goAwaySent
                }
                if first {
                    decision.sendGoAwayAfter = true
                    decision.goAwayDebugData = Array(#"{"reason":"Shutdown"}"#.utf8)
                }
            }
            return decision
        }
        record(request, decision: decision, connection: connection)
        return decision
    }

    // MARK: - Validation

    /// A rejection: status, reason, and the 410 timestamp.
    struct Rejection: Error, Sendable, Hashable {
        package let status: Int
        package let reason: APNsReason
        package let timestampMilliseconds: Int64?

        init(_ status: Int, _ reason: APNsReason, timestamp: Int64? = nil) {
            self.status = status
            self.reason = reason
            self.timestampMilliseconds = timestamp
        }
    }

    /// Validation only (no faults, no recording): the device token (lowercase hex) when the request is valid.
    /// Updates `connection`'s token state as APNs would.
    func validate(_ request: APNsMockRequest, connection: APNsMockConnectionState) -> Result<String, Rejection> {
        request.fields.withFields { bytes in
            check(APNsMockHeaderFields(bytes), body: request.body, connection: connection)
                .map { String(decoding: $0, as: UTF8.self).lowercased() }
        }
    }

    /// The checks in the order of the type's overview, on bytes; the token (the end of the path) when valid.
    private func check(_ fields: APNsMockHeaderFields, body: [UInt8], connection: APNsMockConnectionState)
        -> Result<Bytes, Rejection>
    {
        guard let method = fields.method, APNsMockBytes.equal(method, "POST") else {
            return .failure(.init(405, .methodNotAllowed))
        }
        let path = fields.path ?? Bytes(start: nil, count: 0)
        let tokenLength: Int
        switch Self.checkPath(path) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let length): tokenLength = length
        }
        guard !fields.hasDuplicate else { return .failure(.init(400, .duplicateHeaders)) }
        guard tokenLength > 0 else { return .failure(.init(400, .badDeviceToken)) }

        // Certificate auth on a connection whose handshake verified a client certificate: the bundle IDs it may push
        // to (empty: any allowed one); `authorization` is ignored, as APNs ignores it there.
        var certificateBundleIDs: Set<String>?
        if let certificate = connection.clientCertificate {
            if configuration.clientCertificates.isEmpty {
                certificateBundleIDs = configuration.allowedBundleIDs
            } else {
                guard let bundleIDs = configuration.clientCertificates[certificate] else {
                    return .failure(.init(403, .badCertificate))
                }
                certificateBundleIDs = bundleIDs
            }
        } else {
            let authorization: Rejection?
            switch configuration.authentication {
            case .providerToken(let keys, let teamID):
                authorization = checkProviderToken(fields.authorization, keys: keys, teamID: teamID, connection: connection)
            case .unverifiedProviderToken:
                authorization = checkProviderToken(fields.authorization, keys: nil, teamID: nil, connection: connection)
            case .certificate, .acceptAnyToken:
                authorization = nil
            }
            if let authorization { return .failure(authorization) }
        }

        var pushType = alert
        if let value = fields.pushType {
            guard let known = pushTypes.first(where: { APNsMockBytes.equal(value, bytes: $0.bytes) }) else {
                return .failure(.init(400, .invalidPushType))
            }
            pushType = known
        }

        let topicRejection: Rejection?
        if let topic = fields.topic {
            topicRejection = checkTopic(topic, pushType: pushType, certificateBundleIDs: certificateBundleIDs)
        } else {
            // A single-topic certificate defaults the topic to its bundle ID.
            var single = certificateBundleIDs
            if single == nil, case .certificate = configuration.authentication { single = configuration.allowedBundleIDs }
            guard let single, single.count == 1, var topic = single.first else { return .failure(.init(400, .missingTopic)) }
            topicRejection = topic.withUTF8 { checkTopic($0, pushType: pushType, certificateBundleIDs: certificateBundleIDs) }
        }
        if let topicRejection { return .failure(topicRejection) }

        if let value = fields.priority {
            guard let number = APNsMockBytes.integer(value), [1, 5, 10].contains(number),
                pushType.allowedPriorities & (1 << UInt16(number)) != 0
            else { return .failure(.init(400, .badPriority)) }
        } else if pushType.allowedPriorities & (1 << 10) == 0 {
            return .failure(.init(400, .badPriority))  // the default, 10, is not allowed (background)
        }
        if let value = fields.expiration {
            guard let seconds = APNsMockBytes.integer(value), seconds >= 0 else {
                return .failure(.init(400, .badExpirationDate))
            }
        }
        if let value = fields.collapseID, value.count > APNsRequest.maximumCollapseIDSize {
            return .failure(.init(400, .badCollapseId))
        }
        if let value = fields.apnsID, APNsMockUUID(text: value) == nil {
            return .failure(.init(400, .badMessageId))
        }

        guard !body.isEmpty else { return .failure(.init(400, .payloadEmpty)) }
        guard body.count <= pushType.payloadLimit else { return .failure(.init(413, .payloadTooLarge)) }
        guard APNsMockJSONValidator.isObject(body) else { return .failure(.init(400, .payloadEmpty)) }
        return .success(Bytes(rebasing: path[(path.count - tokenLength)...]))
    }

    /// `apns-topic`: well formed (400 BadTopic), allowed (400 TopicDisallowed), within a certificate's bundle IDs
    /// (400 TopicDisallowed), with the push type's suffix (400 DeviceTokenNotForTopic).
    private func checkTopic(_ topic: Bytes, pushType: KnownPushType, certificateBundleIDs: Set<String>?) -> Rejection? {
        let known = topic.count < allowedTopics.count
            ? allowedTopics[topic.count].first { APNsMockBytes.equal(topic, bytes: $0.bytes) } : nil
        guard known?.wellFormed ?? Self.isWellFormedTopic(topic) else { return .init(400, .badTopic) }
        if !configuration.allowedBundleIDs.isEmpty, known == nil { return .init(400, .topicDisallowed) }
        let suffix = known?.suffix ?? Self.suffix(of: topic)
        if let bundleIDs = certificateBundleIDs, !bundleIDs.isEmpty {
            // A certificate covers its own app only: another app's topic (another team's, say) is disallowed. The
            // topic is well formed here, so ASCII: characters are bytes.
            let bundleID = Bytes(rebasing: topic[..<(topic.count - suffix.utf8.count)])
            guard bundleIDs.contains(where: { APNsMockBytes.equal(bundleID, string: $0) }) else { return .init(400, .topicDisallowed) }
        }
        if !pushType.isMDM, suffix != pushType.topicSuffix ?? "" { return .init(400, .deviceTokenNotForTopic) }
        return nil
    }

    private static let devicePathPrefix: StaticString = "/3/device/"

    /// `/3/device/<token>`: 404 BadPath, 400 MissingDeviceToken, or the token's length; 0 when the token is not an
    /// even number of hex digits of a plausible length (BadDeviceToken, which comes after the duplicate check).
    private static func checkPath(_ bytes: Bytes) -> Result<Int, Rejection> {
        let prefix = devicePathPrefix.utf8CodeUnitCount
        guard bytes.count >= prefix, memcmp(bytes.baseAddress!, devicePathPrefix.utf8Start, prefix) == 0 else {
            return .failure(.init(404, .badPath))
        }
        let length = bytes.count - prefix
        guard length > 0 else { return .failure(.init(400, .missingDeviceToken)) }
        var allHex = HexDigits.scan(Bytes(rebasing: bytes[prefix...])).allHex
        if !allHex {
            for byte in bytes[prefix...] where APNsMockBytes.hexValue(byte) == nil {
                guard byte != UInt8(ascii: "/"), byte != UInt8(ascii: "?") else { return .failure(.init(404, .badPath)) }
                allHex = false
            }
        }
        let plausible = length % 2 == 0 && (DeviceToken.minimumHexDigits...DeviceToken.maximumHexDigits).contains(length)
        return .success(allHex && plausible ? length : 0)
    }

    /// Known suffixes, longest first so `.voip-ptt` wins over `.voip`.
    private static let knownSuffixes: [String] = APNsPushType.all.compactMap(\.topicSuffix).filter { !$0.isEmpty }
        .sorted { $0.utf8.count > $1.utf8.count }

    /// The push-type suffix `topic` ends with (`.voip` for `com.example.app.voip`), or "" for a bare bundle ID.
    static func suffix(of topic: Bytes) -> String {
        for suffix in knownSuffixes where topic.count > suffix.utf8.count {
            if APNsMockBytes.equal(Bytes(rebasing: topic[(topic.count - suffix.utf8.count)...]), string: suffix) { return suffix }
        }
        return ""
    }

    /// Letters, digits, `.`, `-`, `_`; no leading or trailing dot; at most 255 bytes.
    static func isWellFormedTopic(_ bytes: Bytes) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 255, bytes.first != UInt8(ascii: "."), bytes.last != UInt8(ascii: ".") else {
            return false
        }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default:
                false
            }
        }
    }

    // MARK: - Responses

    /// The request's `apns-id` exactly as sent when it is a UUID (APNs echoes it; clients may match the echo byte
    /// for byte), else a generated one in uppercase, as APNs generates them.
    private func responseID(_ fields: APNsMockHeaderFields) -> APNsMockUUID {
        if let id = fields.apnsID, let echoed = APNsMockUUID(text: id) { return echoed }
        return ids.next(uppercase: true)
    }

    private func success(apnsID: APNsMockUUID) -> APNsMockResponse {
        APNsMockResponse(status: 200, id: apnsID, uniqueID: configuration.sendsUniqueID ? ids.next(uppercase: false) : nil)
    }

    private func response(_ rejection: Rejection, apnsID: APNsMockUUID) -> APNsMockResponse {
        var body = #"{"reason":"# + "\"\(rejection.reason.rawValue)\""
        if let timestamp = rejection.timestampMilliseconds { body += #","timestamp":"# + String(timestamp) }
        body += "}"
        return APNsMockResponse(status: rejection.status, id: apnsID, body: Array(body.utf8),
                                reason: rejection.reason.rawValue)
    }

    private func record(_ request: APNsMockRequest, decision: APNsMockDecision, connection: APNsMockConnectionState) {
        let status: Int?
        let outcome: String
        switch decision.action {
        case .respond(let response):
            status = response.status
            outcome = response.reason ?? APNsMockRecorder.success
        case .stall:
            status = nil
            outcome = "Stalled"
        case .dropConnection:
            status = nil
            outcome = "Dropped"
        }
        recorder.record(outcome: outcome) {
            APNsMockRecorder.Entry(
                connectionID: connection.id,
                clientCertificate: connection.clientCertificate,
                fields: request.fields,
                payload: request.body,
                status: status,
                outcome: outcome
            )
        }
    }
}
