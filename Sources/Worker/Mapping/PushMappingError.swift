public import APNs

/// Why a valid event cannot become an APNs request. Never retriable: dead-lettered with ``code`` as reason.
public struct PushMappingError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The bundle id is not in ``MappingConfiguration/allowedBundleIDs``.
        static let topicNotAllowed = Self(rawValue: "topic_not_allowed")
        /// `custom` uses a key the mapper writes, and ``MappingConfiguration/rejectReservedCustomKeys`` is set.
        static let reservedCustomKey = Self(rawValue: "reserved_custom_key")
        /// Over 4096 bytes (5120 for VoIP).
        public static let payloadTooLarge = Self(rawValue: "payload_too_large")
        /// `call_id` longer than 64 bytes cannot be an `apns-collapse-id`.
        public static let badCollapseID = Self(rawValue: "bad_collapse_id")
        /// Any other shape rule of ``APNsRequest`` (topic, priority, expiration, apns-id).
        static let invalidRequest = Self(rawValue: "invalid_request")

        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String
    /// The request-shape error behind it, when there is one.
    public let underlying: APNsRequestError?

    init(_ code: Code, _ message: String, underlying: APNsRequestError? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    init(_ error: APNsRequestError) {
        let code: Code =
            switch error.code {
            case .payloadTooLarge: .payloadTooLarge
            case .badCollapseID: .badCollapseID
            default: .invalidRequest
            }
        self.init(code, error.message, underlying: error)
    }

    public var isRetriable: Bool { false }
    public var description: String { "PushMappingError.\(code): \(message)" }
}
