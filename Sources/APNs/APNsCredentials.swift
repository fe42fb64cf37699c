internal import Crypto
internal import Foundation

/// How callpush authenticates to APNs: a provider token (`.p8` key, preferred) or a TLS client certificate.
package struct APNsCredentials: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        case token(APNsTokenCredentials)
        case certificate(APNsCertificateCredentials)
    }

    package let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// Token auth with the `.p8` key file at `keyPath`.
    package static func token(keyPath: String, keyID: String, teamID: String) -> Self {
        Self(.token(APNsTokenCredentials(key: .file(keyPath), keyID: keyID, teamID: teamID)))
    }

    /// Token auth with the `.p8` key's PEM text (e.g. from a Kubernetes Secret in an environment variable).
    package static func token(keyPEM: String, keyID: String, teamID: String) -> Self {
        Self(.token(APNsTokenCredentials(key: .pem(keyPEM), keyID: keyID, teamID: teamID)))
    }

    /// Certificate auth with a PEM certificate file and a PEM private-key file.
    package static func certificate(certificatePath: String, privateKeyPath: String) -> Self {
        Self(.certificate(APNsCertificateCredentials(source: .pemFiles(certificatePath: certificatePath, privateKeyPath: privateKeyPath))))
    }

    /// Certificate auth with a PKCS12 (`.p12`) archive as exported from Keychain Access.
    package static func certificate(pkcs12Path: String, password: String) -> Self {
        Self(.certificate(APNsCertificateCredentials(source: .pkcs12(path: pkcs12Path, password: password))))
    }

    /// Whether requests carry an `authorization` header.
    var usesProviderToken: Bool {
        if case .token = kind { return true }
        return false
    }
}

