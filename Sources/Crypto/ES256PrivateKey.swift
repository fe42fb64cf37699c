/// An ECDSA P-256 private key for ES256 (the APNs `.p8` provider-token key).
///
/// - Important: immutable and safe to share between threads; signing may run concurrently.
package struct ES256PrivateKey: Sendable {
    let key: OpenSSLKey

    /// Parses a PEM private key: PKCS#8 (`-----BEGIN PRIVATE KEY-----`, Apple's `.p8`) or SEC1
    /// (`-----BEGIN EC PRIVATE KEY-----`).
    /// - Throws: ``CryptoError/Code/invalidPEM``, or ``CryptoError/Code/unsupportedKey`` when it is not P-256.
    package init(pem: String) throws(CryptoError) {
        let key = try OpenSSLKey.privateKey(pem: Array(pem.utf8))
        guard key.isP256 else { throw CryptoError(.unsupportedKey, "ES256 needs an EC P-256 key") }
        self.key = key
    }

    /// Reads and parses the PEM file at `path` (e.g. `AuthKey_ABC123DEFG.p8`).
    /// - Throws: ``CryptoError/Code/fileUnreadable`` plus the errors of ``init(pem:)``.
    package init(pemFile path: String) throws(CryptoError) {
        let bytes = try FileBytes.read(path)
        try self.init(pem: String(decoding: bytes, as: UTF8.self))
    }

    init(uncheckedKey key: OpenSSLKey) { self.key = key }

    /// A new random P-256 key.
    package static func generate() throws(CryptoError) -> ES256PrivateKey {
        ES256PrivateKey(uncheckedKey: try OpenSSLKey.generateP256())
    }

    /// The key as unencrypted PKCS#8 PEM (the `.p8` format).
    package func pemRepresentation() throws(CryptoError) -> String { try key.privateKeyPEM() }

    /// The matching public key.
    package var publicKey: ES256PublicKey { ES256PublicKey(key: key) }

    /// Signs SHA-256(`message`) and returns the raw 64-byte r‖s signature that JWS/JWT (ES256) requires.
    package func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try ECDSASignatureEncoding.raw(fromDER: key.signSHA256(message))
    }

    /// Signs SHA-256(`message`) and returns OpenSSL's native DER signature (what `openssl dgst -sign` writes).
    func derSignature(for message: [UInt8]) throws(CryptoError) -> [UInt8] { try key.signSHA256(message) }
}
