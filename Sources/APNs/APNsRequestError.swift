/// A request that cannot be sent because APNs would reject its shape. Never retriable: the event is
/// dead-lettered with ``code`` as the reason.
package struct APNsRequestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Named after the APNs reason the request would earn.
    package struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        package static let badDeviceToken = Self(rawValue: "BadDeviceToken")
        package static let missingTopic = Self(rawValue: "MissingTopic")
        package static let badTopic = Self(rawValue: "BadTopic")
        package static let badPriority = Self(rawValue: "BadPriority")
        package static let badCollapseID = Self(rawValue: "BadCollapseId")
        static let badExpiration = Self(rawValue: "BadExpirationDate")
        package static let payloadEmpty = Self(rawValue: "PayloadEmpty")
        package static let payloadTooLarge = Self(rawValue: "PayloadTooLarge")

        package var description: String { rawValue }
    }

    package let code: Code
    package let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var isRetriable: Bool { false }
    package var description: String { "APNsRequestError.\(code): \(message)" }
}
