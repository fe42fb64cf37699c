/// Why a record value is not a usable ``CallEvent``. Never retriable: the event goes to the dead-letter
/// topic with ``code`` (its raw value, e.g. `missing_field:call_id`) as `x-dlq-reason`.
package struct EventDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable reason. Field-specific codes carry the field path after a colon.
    package struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// Not JSON (RFC 8259), or not UTF-8.
        static let invalidJSON = Self(rawValue: "invalid_json")
        /// JSON, but the top level is not an object.
        static let notAnObject = Self(rawValue: "not_an_object")
        /// Nested deeper than ``CallEventDecoder/Configuration/maximumNestingDepth``.
        static let nestingTooDeep = Self(rawValue: "nesting_too_deep")
        /// Larger than ``CallEventDecoder/Configuration/maximumEventSize``; not parsed at all.
        static let eventTooLarge = Self(rawValue: "event_too_large")
        /// `device_token` is not an even number of hex digits in APNs' accepted length range.
        package static let badDeviceToken = Self(rawValue: "bad_device_token")
        /// `type` is not incoming, hangup, missed or answered_elsewhere.
        static let unknownType = Self(rawValue: "unknown_type")
        /// `push` is not alert or voip.
        static let unknownPush = Self(rawValue: "unknown_push")
        /// `environment` is not production or sandbox.
        static let unknownEnvironment = Self(rawValue: "unknown_environment")
        /// `ring_timeout_s` is outside the configured range.
        static let badRingTimeout = Self(rawValue: "bad_ring_timeout")
        /// `created_at` is negative or later than 9999-12-31 (``CallEvent/latestCreatedAtMilliseconds``).
        static let badCreatedAt = Self(rawValue: "bad_created_at")

        /// A required field is absent or null.
        static func missingField(_ path: String) -> Self { Self(rawValue: "missing_field:" + path) }
        /// A field has the wrong JSON type (integers must be whole numbers).
        static func wrongType(_ path: String) -> Self { Self(rawValue: "wrong_type:" + path) }
        /// A required string field is empty.
        static func emptyField(_ path: String) -> Self { Self(rawValue: "empty_field:" + path) }

        package var description: String { rawValue }
    }

    package let code: Code
    /// Human-readable detail (never contains the full device token).
    package let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Always false: the same bytes fail the same way on every attempt.
    package var isRetriable: Bool { false }

    package var description: String { "EventDecodingError.\(code): \(message)" }
}
