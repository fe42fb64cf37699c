/// Why the telemetry server could not start.
public struct TelemetryServerError: Error, CustomStringConvertible, Sendable {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        static let invalidAddress = Self(rawValue: "invalidAddress")
        static let bindFailed = Self(rawValue: "bindFailed")
        public var description: String { rawValue }
    }

    public let code: Code
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A bind failure may clear (the port is freed); a bad address never does.
    public var isRetriable: Bool { code == .bindFailed }
    public var description: String { "TelemetryServerError.\(code): \(reason)" }
}
