package import Runtime
package import TLS

/// An error from the HTTP/2 engine: connecting, TLS, framing, or a request that did not complete.
///
/// `code` says what happened; `reason` carries the underlying text (the OpenSSL error stack, `nghttp2_strerror`,
/// `strerror`, or GOAWAY debug data). `isRetriable` tells a caller whether re-sending the same request on another
/// (or a new) connection is safe: the peer is known not to have processed it.
public struct HTTP2Error: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong; an extensible set of static constants.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case connectFailed, tlsHandshakeFailed, certificateVerifyFailed, hostnameMismatch, alpnMismatch
            case tlsConfiguration, protocolError, goAway, notProcessed, streamReset, timeout
            case connectionClosed, pingTimeout, invalidRequest, bindFailed, shutdown
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// TCP connect (or name resolution) failed.
        static let connectFailed = Code(.connectFailed)
        /// The TLS handshake failed for a reason other than certificate verification.
        static let tlsHandshakeFailed = Code(.tlsHandshakeFailed)
        /// The peer certificate did not verify against the trust store.
        static let certificateVerifyFailed = Code(.certificateVerifyFailed)
        /// The peer certificate is valid but not for the requested host name.
        static let hostnameMismatch = Code(.hostnameMismatch)
        /// The peer did not select ALPN `h2`.
        static let alpnMismatch = Code(.alpnMismatch)
        /// A certificate, key or CA file could not be loaded.
        static let tlsConfiguration = Code(.tlsConfiguration)
        /// The peer violated HTTP/2 or nghttp2 reported an error.
        package static let protocolError = Code(.protocolError)
        /// The connection received GOAWAY; the stream was at or below the last stream id but did not finish.
        static let goAway = Code(.goAway)
        /// The request was not processed by the peer (queued locally, or above GOAWAY's last stream id).
        /// Always safe to retry.
        package static let notProcessed = Code(.notProcessed)
        /// The peer reset the stream (`errorCode` holds the HTTP/2 error code). REFUSED_STREAM is retriable.
        package static let streamReset = Code(.streamReset)
        /// The request's deadline passed before a response arrived.
        package static let timeout = Code(.timeout)
        /// The connection closed (locally or by the peer) before the request completed.
        package static let connectionClosed = Code(.connectionClosed)
        /// A PING was not acknowledged in time: the peer is considered dead.
        static let pingTimeout = Code(.pingTimeout)
        /// The request could not be encoded (for example an empty method).
        static let invalidRequest = Code(.invalidRequest)
        /// The server could not bind or listen.
        static let bindFailed = Code(.bindFailed)
        /// The event loop group is shutting down.
        package static let shutdown = Code(.shutdown)

        package var description: String { value.rawValue }
    }

    /// What went wrong.
    package var code: Code
    /// The underlying reason (OpenSSL error stack, nghttp2 error text, errno text, GOAWAY debug data).
    package var reason: String
    /// The HTTP/2 error code from RST_STREAM or GOAWAY, when there was one.
    var errorCode: UInt32?
    /// Where the error was created.
    var file: String
    /// Where the error was created.
    var line: Int

    package init(_ code: Code, reason: String = "", errorCode: UInt32? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.errorCode = errorCode
        self.file = file
        self.line = line
    }

    /// The HTTP/2 REFUSED_STREAM error code (0x7).
    static let refusedStreamErrorCode: UInt32 = 0x7

    /// True when re-sending the request is safe because the peer did not process it: it was never sent, it was above
    /// GOAWAY's last stream id, or the peer refused the stream (REFUSED_STREAM). A timeout or a connection that closed
    /// mid-request is *not* retriable by this definition (the peer may have processed it).
    package var isRetriable: Bool {
        switch code {
        case .notProcessed: return true
        case .streamReset: return errorCode == HTTP2Error.refusedStreamErrorCode
        default: return false
        }
    }

    /// `HTTP2.<code>: reason (h2 error n)`, for people: no source location (``debugDescription`` has it).
    public var description: String {
        var text = "HTTP2.\(code)"
        if !reason.isEmpty { text += ": \(reason)" }
        if let errorCode { text += " (h2 error \(errorCode))" }
        return text
    }

    /// ``description`` and where the error was created, for debug logs.
    public var debugDescription: String { description + " [\(file):\(line)]" }
}

extension HTTP2Error {
    /// A runtime failure in the HTTP/2 layer's terms: a failed connect (or event loop) is `connectFailed`, a failed
    /// listen `bindFailed`. Keeps where the error was created.
    package init(_ error: SocketError) {
        let code: Code = error.code == .bindFailed ? .bindFailed : .connectFailed
        self.init(code, reason: error.reason, file: error.file, line: error.line)
    }

    /// A TLS failure in the HTTP/2 layer's terms (`tlsHandshakeFailed`, `certificateVerifyFailed`, `tlsConfiguration`,
    /// …); input the session refused is a `protocolError`. Keeps where the error was created.
    package init(_ error: TLSError) {
        let code: Code
        switch error.code {
        case .connectFailed: code = .connectFailed
        case .handshakeFailed: code = .tlsHandshakeFailed
        case .certificateVerifyFailed: code = .certificateVerifyFailed
        case .hostnameMismatch: code = .hostnameMismatch
        case .alpnMismatch: code = .alpnMismatch
        case .configuration: code = .tlsConfiguration
        case .inputRejected: code = .protocolError
        case .shutdown: code = .shutdown
        default: code = .connectionClosed
        }
        self.init(code, reason: error.reason, file: error.file, line: error.line)
    }
}
