public import Crypto
internal import Foundation

/// How callpush authenticates to APNs: a provider token (`.p8` key, preferred) or a TLS client certificate.
public struct APNsCredentials: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case token(APNsTokenCredentials)
        case certificate(APNsCertificateCredentials)
    }

    public let kind: Kind

    public init(_ kind: Kind) { self.kind = kind }

    /// Token auth with the `.p8` key file at `keyPath`.
    public static func token(keyPath: String, keyID: String, teamID: String) -> Self {
        Self(.token(APNsTokenCredentials(key: .file(keyPath), keyID: keyID, teamID: teamID)))
    }

    /// Token auth with the `.p8` key's PEM text (e.g. from a Kubernetes Secret in an environment variable).
    public static func token(keyPEM: String, keyID: String, teamID: String) -> Self {
        Self(.token(APNsTokenCredentials(key: .pem(keyPEM), keyID: keyID, teamID: teamID)))
    }

    /// Certificate auth with a PEM certificate file and a PEM private-key file.
    public static func certificate(certificatePath: String, privateKeyPath: String) -> Self {
        Self(.certificate(APNsCertificateCredentials(source: .pemFiles(certificatePath: certificatePath, privateKeyPath: privateKeyPath))))
    }

    /// Certificate auth with a PKCS#12 (`.p12`) archive as exported from Keychain Access.
    public static func certificate(pkcs12Path: String, password: String) -> Self {
        Self(.certificate(APNsCertificateCredentials(source: .pkcs12(path: pkcs12Path, password: password))))
    }

    /// Whether requests carry an `authorization` header.
    public var usesProviderToken: Bool {
        if case .token = kind { return true }
        return false
    }
}

/// Token-based authentication: a P-256 `.p8` key, its 10-character key ID and the 10-character team ID.
public struct APNsTokenCredentials: Sendable, Hashable {
    public enum KeySource: Sendable, Hashable {
        /// A `.p8` file path.
        case file(String)
        /// The PEM text itself.
        case pem(String)
    }

    public let key: KeySource
    public let keyID: String
    public let teamID: String

    public init(key: KeySource, keyID: String, teamID: String) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Loads the key and returns a signer for it.
    /// - Throws: ``CryptoError`` when the key cannot be read or is not P-256.
    public func makeSigner() throws(CryptoError) -> JWTSigner {
        let privateKey: ES256PrivateKey
        switch key {
        case .file(let path): privateKey = try ES256PrivateKey(pemFile: path)
        case .pem(let text): privateKey = try ES256PrivateKey(pem: text)
        }
        return JWTSigner(privateKey: privateKey, keyID: keyID, teamID: teamID)
    }

    /// Never prints the key.
    public var redactedDescription: String {
        switch key {
        case .file(let path): "token(keyPath: \(path), keyID: \(keyID), teamID: \(teamID))"
        case .pem: "token(keyPEM: <redacted>, keyID: \(keyID), teamID: \(teamID))"
        }
    }
}

/// Certificate-based authentication (mutual TLS).
public struct APNsCertificateCredentials: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        case pemFiles(certificatePath: String, privateKeyPath: String)
        case pkcs12(path: String, password: String)
    }

    /// The PEM a TLS layer loads: leaf certificate, its key, and any intermediates.
    public struct PEM: Sendable, Hashable {
        public let certificatePEM: String
        public let privateKeyPEM: String
        public let chainPEM: String
    }

    public let source: Source

    public init(source: Source) { self.source = source }

    /// Reads the files (converting a `.p12` in memory) and returns PEM text.
    /// - Throws: ``CryptoError`` (`fileUnreadable`, `invalidPKCS12`).
    public func loadPEM() throws(CryptoError) -> PEM {
        switch source {
        case .pemFiles(let certificatePath, let privateKeyPath):
            let certificate = try Self.readText(certificatePath)
            let key = try Self.readText(privateKeyPath)
            return PEM(certificatePEM: certificate, privateKeyPEM: key, chainPEM: "")
        case .pkcs12(let path, let password):
            let contents = try PKCS12Archive.contents(ofFile: path, password: password)
            return PEM(certificatePEM: contents.certificatePEM, privateKeyPEM: contents.privateKeyPEM, chainPEM: contents.chainPEM)
        }
    }

    private static func readText(_ path: String) throws(CryptoError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CryptoError(.fileUnreadable, "cannot read \(path)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
