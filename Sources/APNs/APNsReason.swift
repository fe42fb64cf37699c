/// An APNs `reason` string (from the error body or GOAWAY debug data), or a transport reason callpush uses when no
/// response arrived. Unknown strings are kept as they are and classified by status code.
package struct APNsReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) { self.rawValue = rawValue }
    init(_ rawValue: String) { self.rawValue = rawValue }

    // MARK: - 400
    package static let badCollapseId = Self("BadCollapseId")
    package static let badDeviceToken = Self("BadDeviceToken")
    package static let badExpirationDate = Self("BadExpirationDate")
    package static let badMessageId = Self("BadMessageId")
    package static let badPriority = Self("BadPriority")
    package static let badTopic = Self("BadTopic")
    package static let deviceTokenNotForTopic = Self("DeviceTokenNotForTopic")
    package static let duplicateHeaders = Self("DuplicateHeaders")
    static let idleTimeout = Self("IdleTimeout")
    package static let invalidPushType = Self("InvalidPushType")
    package static let missingDeviceToken = Self("MissingDeviceToken")
    package static let missingTopic = Self("MissingTopic")
    package static let payloadEmpty = Self("PayloadEmpty")
    package static let topicDisallowed = Self("TopicDisallowed")
    // MARK: - 403
    package static let badCertificate = Self("BadCertificate")
    static let badCertificateEnvironment = Self("BadCertificateEnvironment")
    package static let expiredProviderToken = Self("ExpiredProviderToken")
    static let forbidden = Self("Forbidden")
    package static let invalidProviderToken = Self("InvalidProviderToken")
    package static let missingProviderToken = Self("MissingProviderToken")
    package static let unrelatedKeyIdInToken = Self("UnrelatedKeyIdInToken")
    static let badEnvironmentKeyIdInToken = Self("BadEnvironmentKeyIdInToken")
    /// Not in Apple's table but observed from APNs (APNSwift PR #229).
    static let badEnvironmentKeyInToken = Self("BadEnvironmentKeyInToken")
    // MARK: - 404, 405, 410, 413, 429, 5xx
    package static let badPath = Self("BadPath")
    package static let methodNotAllowed = Self("MethodNotAllowed")
    static let expiredToken = Self("ExpiredToken")
    package static let unregistered = Self("Unregistered")
    package static let payloadTooLarge = Self("PayloadTooLarge")
    package static let tooManyProviderTokenUpdates = Self("TooManyProviderTokenUpdates")
    package static let tooManyRequests = Self("TooManyRequests")
    package static let internalServerError = Self("InternalServerError")
    package static let serviceUnavailable = Self("ServiceUnavailable")
    package static let shutdown = Self("Shutdown")

    // MARK: - Broadcast / channel management only (A-BERR)
    static let featureNotEnabled = Self("FeatureNotEnabled")
    static let missingChannelId = Self("MissingChannelId")
    static let badChannelId = Self("BadChannelId")
    static let channelNotRegistered = Self("ChannelNotRegistered")
    static let badRequestParams = Self("BadRequestParams")
    static let badRequestPayload = Self("BadRequestPayload")
    static let missingPushType = Self("MissingPushType")
    static let cannotCreateChannelConfig = Self("CannotCreateChannelConfig")
    static let topicMismatch = Self("TopicMismatch")

    // MARK: - Transport (callpush's own; APNs never sends these)
    /// The deadline passed before a response arrived. Delivery is unknown.
    package static let timeout = Self("Timeout")
    /// The connection broke while the stream was open. Delivery is unknown.
    package static let connectionLost = Self("ConnectionLost")
    /// Not sent: every connection of its pool is down and the last connect failed, so it is handed back at once
    /// (retry later) instead of waiting out the request timeout beside the pushes of apps whose APNs is reachable.
    package static let connectFailed = Self("ConnectFailed")
    /// APNs did not process the stream (above GOAWAY's last stream id, or REFUSED_STREAM): safe to resend.
    package static let notProcessed = Self("NotProcessed")

    // MARK: - Routing (callpush's own, from ``APNsAppRouter``; nothing was sent)
    /// No configured app serves the request's bundle id: permanent (the worker dead-letters it as `unknown_app`).
    package static let unknownApp = Self("UnknownApp")
    /// The app's credential already has its bound of pushes in flight: retry later (its trouble must not fill the
    /// worker's in-flight window).
    package static let appInFlightLimit = Self("AppInFlightLimit")

    /// Every reason APNs documents or has been seen sending for device pushes (docs/apns.md has the table).
    static let allDevicePushReasons: [Self] = [
        .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
        .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken, .missingTopic,
        .payloadEmpty, .topicDisallowed, .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden,
        .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken,
        .badEnvironmentKeyInToken, .badPath, .methodNotAllowed, .expiredToken, .unregistered, .payloadTooLarge,
        .tooManyProviderTokenUpdates, .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown,
    ]

    /// Reasons only the broadcast/channel APIs send.
    static let allBroadcastReasons: [Self] = [
        .featureNotEnabled, .missingChannelId, .badChannelId, .channelNotRegistered, .badRequestParams,
        .badRequestPayload, .missingPushType, .cannotCreateChannelConfig, .topicMismatch,
    ]

    /// Transport reasons callpush uses when no response arrived.
    static let allTransportReasons: [Self] = [.timeout, .connectionLost, .notProcessed, .connectFailed]

    /// Whether this string is one of the reasons above.
    var isKnown: Bool {
        Self.allDevicePushReasons.contains(self) || Self.allBroadcastReasons.contains(self)
            || Self.allTransportReasons.contains(self)
    }

    /// This reason as a metric label: itself when it is one APNs documents or callpush uses, else `other` (a peer
    /// may send any text; the label set stays bounded).
    package var metricLabel: String {
        isKnown || self == .unknownApp || self == .appInFlightLimit ? rawValue : "other"
    }

    /// The status APNs sends with this reason (nil for transport reasons and unknown strings).
    var documentedStatus: Int? {
        switch self {
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
            .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken,
            .topicMismatch:
            403
        case .badPath, .channelNotRegistered: 404
        case .methodNotAllowed: 405
        case .expiredToken, .unregistered: 410
        case .payloadTooLarge: 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: 429
        case .internalServerError: 500
        case .serviceUnavailable, .shutdown: 503
        case _ where Self.allTransportReasons.contains(self): nil
        case _ where isKnown: 400
        default: nil
        }
    }

    /// APNs rejected the provider token as too old: mint a new one (``APNsTokenCache/invalidate(ifMatches:)``) and
    /// retry once.
    var needsTokenRefresh: Bool { self == .expiredProviderToken }

    /// The connection that got this answer should be replaced (drained, then closed; new pushes go to a new
    /// connection): `InternalServerError` (connections can get stuck returning 500), `Shutdown`, `IdleTimeout`,
    /// `UnrelatedKeyIdInToken` (the connection is bound to another key), `TooManyProviderTokenUpdates` (unusable
    /// until 20 min pass) and `ExpiredProviderToken` (APNs may wedge the connection); also the transport reasons
    /// `ConnectionLost` and `Timeout`.
    var needsNewConnection: Bool {
        switch self {
        case .internalServerError, .shutdown, .idleTimeout, .unrelatedKeyIdInToken, .tooManyProviderTokenUpdates,
            .expiredProviderToken, .connectionLost, .timeout:
            true
        default:
            false
        }
    }

    /// The disposition for this reason, or nil when the reason alone does not decide it (unknown strings, and
    /// reasons whose meaning depends on nothing but the status).
    package var disposition: APNsDisposition? {
        switch self {
        case .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic:
            .tokenInvalid
        case .tooManyRequests, .idleTimeout, .internalServerError, .serviceUnavailable, .shutdown, .timeout,
            .connectionLost, .notProcessed, .appInFlightLimit, .connectFailed:
            .retryLater
        case .unknownApp:
            .permanent
        case .expiredProviderToken, .invalidProviderToken, .missingProviderToken, .badCertificate,
            .badCertificateEnvironment, .forbidden, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken,
            .badEnvironmentKeyInToken, .tooManyProviderTokenUpdates, .topicMismatch, .featureNotEnabled:
            .fixCredentials
        case _ where isKnown:
            .permanent
        default:
            nil
        }
    }

    /// The disposition for a status code alone (used for unknown or missing reasons): 200 delivered, 410 token
    /// invalid, 403 fix credentials, 429 and 5xx retry later, other 4xx permanent; anything else (1xx, 3xx, odd codes)
    /// retry later, since it says nothing about the push.
    package static func disposition(forStatus status: Int) -> APNsDisposition {
        switch status {
        case 200: .delivered
        case 410: .tokenInvalid
        case 403: .fixCredentials
        case 429, 500...599: .retryLater
        case 400...499: .permanent
        default: .retryLater
        }
    }

    package var description: String { rawValue }
}
