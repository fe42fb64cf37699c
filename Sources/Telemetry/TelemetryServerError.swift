/// Why the telemetry server could not start.
package struct TelemetryServerError: Error, CustomStringConvertible, Sendable {
    package struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        static let invalidAddress = Self(rawValue: "invalidAddress")
        static let bindFailed = Self(rawValue: "bindFailed")
        package var description: String { rawValue }
    }

    package let code: Code
    package let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A bind failure may clear (the port is freed); a bad address never does.
    package var isRetriable: Bool { code == .bindFailed }
    package var description: String { "TelemetryServerError.\(code): \(reason)" }
}
