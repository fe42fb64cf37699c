package import Crypto
package import Telemetry

/// Mints APNs provider tokens with one `.p8` key.
///
/// The header is `{"alg":"ES256","kid":"<keyID>"}`, the claims `{"iss":"<teamID>","iat":<seconds>}` (an integer
/// in seconds, no `exp`), the signature raw 64-byte r‖s, each part base64url without padding.
///
/// - Important: immutable and safe to share between threads.
package struct JWTSigner: Sendable {
    let privateKey: ES256PrivateKey
    package let keyID: String
    package let teamID: String

    package init(privateKey: ES256PrivateKey, keyID: String, teamID: String) {
        self.privateKey = privateKey
        self.keyID = keyID
        self.teamID = teamID
    }

    /// A token issued at `issuedAt` (seconds since the epoch).
    /// - Throws: ``CryptoError`` when OpenSSL cannot sign.
    package func makeToken(issuedAt: Int64) throws(CryptoError) -> APNsProviderToken {
        let header = #"{"alg":"ES256","kid":"# + Self.jsonString(keyID) + "}"
        let claims = #"{"iss":"# + Self.jsonString(teamID) + #","iat":"# + String(issuedAt) + "}"
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let signature = try privateKey.signature(for: Array(signingInput.utf8))
        return APNsProviderToken(
            jwt: signingInput + "." + Base64URL.encode(signature),
            keyID: keyID,
            teamID: teamID,
            issuedAt: issuedAt
        )
    }

    /// A token issued now by `clock`.
    package func makeToken(clock: any WallClock = SystemWallClock()) throws(CryptoError) -> APNsProviderToken {
        try makeToken(issuedAt: clock.now().wholeSeconds)
    }

    /// A JSON string literal with quotes and escapes.
    static func jsonString(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}
