/// Why an ``APNsMockServer`` could not start.
package struct APNsMockServerError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable { case certificate, tls, bind, eventLoop, measurement }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The certificate could not be generated or written.
        package static let certificate = Code(.certificate)
        /// The TLS context could not be built (unreadable certificate, key or CA file).
        static let tls = Code(.tls)
        /// The address could not be bound.
        static let bind = Code(.bind)
        /// Event loops could not be started.
        static let eventLoop = Code(.eventLoop)
        /// A benchmark run produced no usable result (e.g. unexpected h2load output).
        package static let measurement = Code(.measurement)

        package var description: String { value.rawValue }
    }

    package let code: Code
    package let reason: String
    let file: String
    let line: Int

    package init(_ code: Code, _ reason: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// Binding may succeed later (the port may be freed); the rest are configuration errors.
    package var isRetriable: Bool { code == .bind }

    /// `APNsMock.<code>: reason`, for people: no source location (``debugDescription`` has it).
    package var description: String { "APNsMock.\(code): \(reason)" }

    /// ``description`` and where the error was created, for debug logs.
    package var debugDescription: String { description + " [\(file):\(line)]" }
}
