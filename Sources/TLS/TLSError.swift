/// An error from the TLS layer: loading certificates and keys, the handshake, or a TLS connection that ended.
///
/// `code` says what happened; `reason` carries the underlying text (the OpenSSL error stack, the certificate
/// verification result, `strerror`).
package struct TLSError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong; an extensible set of static constants.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case connectFailed, handshakeFailed, certificateVerifyFailed, hostnameMismatch, alpnMismatch
            case configuration, inputRejected, connectionClosed, shutdown
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The TCP connect under the TLS session failed, or its socket could not join the event loop.
        package static let connectFailed = Code(.connectFailed)
        /// The handshake failed for a reason other than certificate verification.
        package static let handshakeFailed = Code(.handshakeFailed)
        /// The peer certificate did not verify against the trust store.
        package static let certificateVerifyFailed = Code(.certificateVerifyFailed)
        /// The peer certificate is valid but not for the requested host name.
        package static let hostnameMismatch = Code(.hostnameMismatch)
        /// The peer did not select ALPN `h2`.
        package static let alpnMismatch = Code(.alpnMismatch)
        /// A certificate, key or CA file could not be loaded, or OpenSSL could not set up a context or session.
        package static let configuration = Code(.configuration)
        /// The transport's delegate refused the bytes it read (the delegate knows why).
        package static let inputRejected = Code(.inputRejected)
        /// The connection closed: by the peer, locally, or after the session finished.
        package static let connectionClosed = Code(.connectionClosed)
        /// The event loop shut down.
        package static let shutdown = Code(.shutdown)

        package var description: String { value.rawValue }
    }

    /// What went wrong.
    package var code: Code
    /// The underlying reason (OpenSSL error stack, verification result, errno text).
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

    /// True when a new connection may succeed where this one failed: its TCP connect failed. A certificate, name,
    /// ALPN or configuration failure repeats on every attempt.
    package var isRetriable: Bool { code == .connectFailed }

    /// `TLS.<code>: reason`, for people: no source location (``debugDescription`` has it).
    package var description: String {
        reason.isEmpty ? "TLS.\(code)" : "TLS.\(code): \(reason)"
    }

    /// ``description`` and where the error was created, for debug logs.
    package var debugDescription: String { description + " [\(file):\(line)]" }
}
