/// An ECDSA P-256 public key: verifies ES256 signatures.
package struct ES256PublicKey: Sendable {
    let key: OpenSSLKey

    init(key: OpenSSLKey) { self.key = key }

    /// Parses a PEM public key (`-----BEGIN PUBLIC KEY-----`).
    /// - Throws: ``CryptoError/Code/invalidPEM``, or ``CryptoError/Code/unsupportedKey`` when it is not P-256.
    package init(pem: String) throws(CryptoError) {
        let key = try OpenSSLKey.publicKey(pem: Array(pem.utf8))
        guard key.isP256 else { throw CryptoError(.unsupportedKey, "ES256 needs an EC P-256 key") }
        self.key = key
    }

    /// The key as SubjectPublicKeyInfo PEM.
    package func pemRepresentation() throws(CryptoError) -> String { try key.publicKeyPEM() }

    /// Whether `signature` (raw 64-byte r‖s) is a valid ES256 signature of `message`. Any malformed input is
    /// simply invalid.
    package func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64, let der = try? ECDSASignatureEncoding.der(fromRaw: signature) else {
            return false
        }
        return key.verifySHA256(derSignature: der, message: message)
    }

    /// Whether `signature` (DER) is a valid ECDSA P-256/SHA-256 signature of `message`.
    package func isValidDERSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.verifySHA256(derSignature: signature, message: message)
    }
}
