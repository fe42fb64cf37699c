/// A request that cannot be sent because APNs would reject its shape. Never retriable: the event is
/// dead-lettered with ``code`` as the reason.
public struct APNsRequestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Named after the APNs reason the request would earn.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let badDeviceToken = Self(rawValue: "BadDeviceToken")
        public static let missingTopic = Self(rawValue: "MissingTopic")
        public static let badTopic = Self(rawValue: "BadTopic")
        public static let badPriority = Self(rawValue: "BadPriority")
        public static let badCollapseID = Self(rawValue: "BadCollapseId")
        static let badExpiration = Self(rawValue: "BadExpirationDate")
        public static let payloadEmpty = Self(rawValue: "PayloadEmpty")
        public static let payloadTooLarge = Self(rawValue: "PayloadTooLarge")

        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var isRetriable: Bool { false }
    public var description: String { "APNsRequestError.\(code): \(message)" }
}
