package import APNs

/// Why a valid event cannot become an APNs request. Never retriable: dead-lettered with ``code`` as reason.
package struct PushMappingError: Error, Hashable, Sendable, CustomStringConvertible {
    package struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The bundle id is not in ``MappingConfiguration/allowedBundleIDs``.
        static let topicNotAllowed = Self(rawValue: "topic_not_allowed")
        /// `custom` uses a key the mapper writes, and ``MappingConfiguration/rejectReservedCustomKeys`` is set.
        static let reservedCustomKey = Self(rawValue: "reserved_custom_key")
        /// Over 4096 bytes (5120 for VoIP).
        package static let payloadTooLarge = Self(rawValue: "payload_too_large")
        /// `call_id` longer than 64 bytes cannot be an `apns-collapse-id`.
        package static let badCollapseID = Self(rawValue: "bad_collapse_id")
        /// Any other shape rule of ``APNsRequest`` (topic, priority, expiration, apns-id).
        static let invalidRequest = Self(rawValue: "invalid_request")

        package var description: String { rawValue }
    }

    package let code: Code
    package let message: String
    /// The request-shape error behind it, when there is one.
    package let underlying: APNsRequestError?

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

    package var isRetriable: Bool { false }
    package var description: String { "PushMappingError.\(code): \(message)" }
}
