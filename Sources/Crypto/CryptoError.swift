/// An error from the Crypto module: a key that cannot be read or used, a signature or certificate OpenSSL
/// refused to make, a file that cannot be written.
///
/// Crypto errors are never retriable: the same input gives the same failure. The OpenSSL error queue at the
/// time of the failure is attached as text (``openSSLErrors``).
package struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, as an extensible set of static values.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case fileUnreadable, fileUnwritable, invalidPEM, unsupportedKey, keyGenerationFailed, signingFailed
            case invalidSignature, certificateGenerationFailed, invalidPKCS12, invalidBase64
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// A key, certificate or archive file could not be opened or read.
        package static let fileUnreadable = Self(.fileUnreadable)
        /// A file could not be written (directory missing, permissions).
        static let fileUnwritable = Self(.fileUnwritable)
        /// The text is not a PEM key or certificate OpenSSL can parse.
        static let invalidPEM = Self(.invalidPEM)
        /// The key parsed but is not an EC P-256 key (ES256 needs P-256).
        static let unsupportedKey = Self(.unsupportedKey)
        /// OpenSSL could not generate a key.
        static let keyGenerationFailed = Self(.keyGenerationFailed)
        /// OpenSSL could not sign.
        static let signingFailed = Self(.signingFailed)
        /// A signature is not 64 bytes of r‖s.
        static let invalidSignature = Self(.invalidSignature)
        /// OpenSSL could not build or sign an X.509 certificate.
        static let certificateGenerationFailed = Self(.certificateGenerationFailed)
        /// A PKCS12 archive could not be parsed (corrupt, or wrong password).
        static let invalidPKCS12 = Self(.invalidPKCS12)
        /// Text is not base64url.
        static let invalidBase64 = Self(.invalidBase64)

        package var description: String { value.rawValue }
    }

    package let code: Code
    /// A human-readable reason.
    package let reason: String
    /// OpenSSL's error queue (`ERR_get_error` + `ERR_error_string_n`), oldest first; empty when not from OpenSSL.
    let openSSLErrors: [String]
    let file: String
    let line: Int

    package init(
        _ code: Code,
        _ reason: String,
        openSSLErrors: [String] = [],
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.reason = reason
        self.openSSLErrors = openSSLErrors
        self.file = file
        self.line = line
    }

    /// Crypto failures are deterministic: retrying the same call cannot help.
    package var isRetriable: Bool { false }

    /// `Crypto.<code>: reason [openssl: …]`, for people: no source location (``debugDescription`` has it).
    package var description: String {
        var text = "Crypto.\(code): \(reason)"
        if !openSSLErrors.isEmpty { text += " [openssl: \(openSSLErrors.joined(separator: "; "))]" }
        return text
    }

    /// ``description`` and where the error was created, for debug logs.
    package var debugDescription: String { description + " [\(file):\(line)]" }
}

extension CryptoError {
    /// An error carrying (and clearing) the current thread's OpenSSL error queue.
    static func openSSL(_ code: Code, _ reason: String, file: String = #fileID, line: Int = #line) -> CryptoError {
        CryptoError(code, reason, openSSLErrors: OpenSSLErrorStack.drain(), file: file, line: line)
    }
}
