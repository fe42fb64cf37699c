/// An error from the event-loop runtime: resolving a name, connecting or listening on a socket, or setting up an
/// event loop (epoll, eventfd).
///
/// `code` says what happened; `reason` carries the underlying text (`strerror`, `gai_strerror`).
package struct SocketError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong; an extensible set of static constants.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case connectFailed, bindFailed, eventLoopFailed
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Name resolution, creating the socket, or the TCP connect failed.
        package static let connectFailed = Code(.connectFailed)
        /// The socket could not bind or listen.
        package static let bindFailed = Code(.bindFailed)
        /// An event loop could not be set up (epoll or eventfd).
        package static let eventLoopFailed = Code(.eventLoopFailed)

        package var description: String { value.rawValue }
    }

    /// What went wrong.
    package var code: Code
    /// The underlying reason (errno text, resolver text).
    package var reason: String
    /// Where the error was created.
    package var file: String
    /// Where the error was created.
    package var line: Int

    package init(_ code: Code, reason: String = "", file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// True when trying again (another address, a new connection) may succeed: a connect can fail for one address
    /// or one moment; a port in use or an event loop the kernel refused stays refused.
    package var isRetriable: Bool { code == .connectFailed }

    /// `Socket.<code>: reason`, for people: no source location (``debugDescription`` has it).
    package var description: String {
        reason.isEmpty ? "Socket.\(code)" : "Socket.\(code): \(reason)"
    }

    /// ``description`` and where the error was created, for debug logs.
    package var debugDescription: String { description + " [\(file):\(line)]" }
}
