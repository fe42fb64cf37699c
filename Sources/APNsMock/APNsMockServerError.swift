/// Why an ``APNsMockServer`` could not start.
public struct APNsMockServerError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable { case certificate, tls, bind, eventLoop, measurement }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The certificate could not be generated or written.
        public static let certificate = Code(.certificate)
        /// The TLS context could not be built (unreadable certificate, key or CA file).
        static let tls = Code(.tls)
        /// The address could not be bound.
        static let bind = Code(.bind)
        /// Event loops could not be started.
        static let eventLoop = Code(.eventLoop)
        /// A benchmark run produced no usable result (e.g. unexpected h2load output).
        public static let measurement = Code(.measurement)

        public var description: String { value.rawValue }
    }

    public let code: Code
    public let reason: String
    let file: String
    let line: Int

    public init(_ code: Code, _ reason: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// Binding may succeed later (the port may be freed); the rest are configuration errors.
    public var isRetriable: Bool { code == .bind }

    /// `APNsMock.<code>: reason`, for people: no source location (``debugDescription`` has it).
    public var description: String { "APNsMock.\(code): \(reason)" }

    /// ``description`` and where the error was created, for debug logs.
    public var debugDescription: String { description + " [\(file):\(line)]" }
}
