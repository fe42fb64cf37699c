package import Crypto
internal import Foundation

/// Certificate-based authentication (mutual TLS).
package struct APNsCertificateCredentials: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        case pemFiles(certificatePath: String, privateKeyPath: String)
        case pkcs12(path: String, password: String)
    }

    /// The PEM a TLS layer loads: leaf certificate, its key, and any intermediates.
    package struct PEM: Sendable, Hashable {
        package let certificatePEM: String
        package let privateKeyPEM: String
        let chainPEM: String
    }

    let source: Source

    init(source: Source) { self.source = source }

    /// Reads the files (converting a `.p12` in memory) and returns PEM text.
    /// - Throws: ``CryptoError`` (`fileUnreadable`, `invalidPKCS12`).
    package func loadPEM() throws(CryptoError) -> PEM {
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
