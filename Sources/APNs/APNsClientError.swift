/// Why an ``APNsClient`` could not be created. Push outcomes are never errors: they are ``APNsResult``s.
package struct APNsClientError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable { case credentials, transport, configuration }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The key, certificate or PKCS12 archive could not be loaded.
        package static let credentials = Code(.credentials)
        /// Event loops or the TLS context could not be set up.
        static let transport = Code(.transport)
        /// The apps configuration is invalid (a repeated bundle id, a malformed key id, …).
        package static let configuration = Code(.configuration)

        package var description: String { value.rawValue }
    }

    package let code: Code
    package let reason: String
    let file: String
    let line: Int

    init(_ code: Code, _ reason: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// Configuration errors are not retriable.
    package var isRetriable: Bool { false }

    /// `APNs.<code>: reason`, for people: no source location (``debugDescription`` has it).
    package var description: String { "APNs.\(code): \(reason)" }

    /// ``description`` and where the error was created, for debug logs.
    package var debugDescription: String { description + " [\(file):\(line)]" }
}
