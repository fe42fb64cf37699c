internal import Crypto

/// Token-based authentication: a P-256 `.p8` key, its 10-character key ID and the 10-character team ID.
package struct APNsTokenCredentials: Sendable, Hashable {
    package enum KeySource: Sendable, Hashable {
        /// A `.p8` file path.
        case file(String)
        /// The PEM text itself.
        case pem(String)
    }

    package let key: KeySource
    package let keyID: String
    package let teamID: String

    init(key: KeySource, keyID: String, teamID: String) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Loads the key and returns a signer for it.
    /// - Throws: ``CryptoError`` when the key cannot be read or is not P-256.
    func makeSigner() throws(CryptoError) -> JWTSigner {
        let privateKey: ES256PrivateKey
        switch key {
        case .file(let path): privateKey = try ES256PrivateKey(pemFile: path)
        case .pem(let text): privateKey = try ES256PrivateKey(pem: text)
        }
        return JWTSigner(privateKey: privateKey, keyID: keyID, teamID: teamID)
    }

    /// Never prints the key.
    var redactedDescription: String {
        switch key {
        case .file(let path): "token(keyPath: \(path), keyID: \(keyID), teamID: \(teamID))"
        case .pem: "token(keyPEM: <redacted>, keyID: \(keyID), teamID: \(teamID))"
        }
    }
}
