internal import APNs
internal import Crypto
internal import Foundation
internal import Telemetry

extension APNsMockValidator {
    /// Checks `authorization` (the header's bytes) as APNs does for token auth and updates the connection's token
    /// state. Returns nil when the token is accepted. `keys` nil: no key to verify against
    /// (``APNsMockConfiguration/Authentication/unverifiedProviderToken``): the token must decode, its signature is not
    /// checked.
    ///
    /// The connection's already-verified token (almost every request) costs one lock and one comparison of the
    /// header's bytes; a token the connection has not used before is decoded and verified once.
    func checkProviderToken(
        _ authorization: UnsafeBufferPointer<UInt8>?,
        keys: [String: ES256PublicKey]?,
        teamID: String?,
        connection: APNsMockConnectionState
    ) -> Rejection? {
        guard let authorization, !authorization.isEmpty else { return Rejection(403, .missingProviderToken) }
        let now = configuration.clock.now().seconds
        let known = connection.state.withLock { state -> (verified: Bool, rejection: Rejection?) in
            guard let verified = state.verifiedToken, APNsMockBytes.equal(authorization, string: verified.authorization) else {
                return (false, nil)
            }
            return (true, applyTokenRules(verified.authorization, keyID: verified.keyID, issuedAt: verified.issuedAt,
                                          now: now, state: &state))
        }
        if known.verified { return known.rejection }

        let scheme: StaticString = "bearer "
        guard authorization.count > scheme.utf8CodeUnitCount, APNsMockBytes.hasPrefixIgnoringASCIICase(authorization, scheme)
        else { return Rejection(403, .invalidProviderToken) }
        let text = String(decoding: authorization, as: UTF8.self)
        let jwt = Substring(text.utf8.dropFirst(scheme.utf8CodeUnitCount))
        guard let (keyID, issuedAt) = verify(jwt, keys: keys, teamID: teamID) else {
            return Rejection(403, .invalidProviderToken)
        }
        return connection.state.withLock { state in
            state.verifiedToken = (text, keyID, issuedAt)
            return applyTokenRules(text, keyID: keyID, issuedAt: issuedAt, now: now, state: &state)
        }
    }

    /// Decodes and verifies a JWT: ES256, a `kid` (one of `keys` when given), `iss` (`teamID` when given), an
    /// integer `iat`, and (with `keys`) a valid signature.
    /// - Returns: the key id and `iat`, or nil when it is not a valid provider token.
    private func verify(_ jwt: Substring, keys: [String: ES256PublicKey]?, teamID: String?)
        -> (keyID: String, issuedAt: Int64)?
    {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]), !signature.isEmpty,
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { return nil }
        guard header["alg"] as? String == "ES256", let keyID = header["kid"] as? String, let issuer = claims["iss"] as? String,
            let issuedAt = Self.integer(claims["iat"])
        else { return nil }
        // Each key may belong to its own team (several apps' keys in one mock); otherwise the one configured team.
        let team = configuration.keyTeams[keyID] ?? teamID
        guard team == nil || issuer == team else { return nil }
        guard let keys else { return (keyID, issuedAt) }
        guard let key = keys[keyID] else { return nil }
        let signingInput = Array(jwt.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let verified = signature.count == 64
            ? key.isValidSignature(signature, for: signingInput)
            : key.isValidDERSignature(signature, for: signingInput)
        return verified ? (keyID, issuedAt) : nil
    }

    /// The time rules: not from the future, at most an hour old, not replaced too often on one connection, and
    /// (when configured) always the key the connection started with. Runs under the connection's lock.
    private func applyTokenRules(
        _ authorization: String, keyID: String, issuedAt: Int64, now: Double, state: inout APNsMockConnectionState.State
    ) -> Rejection? {
        let age = now - Double(issuedAt)
        guard age >= -maximumTokenClockSkew else { return Rejection(403, .invalidProviderToken) }
        guard age <= maximumTokenAge else { return Rejection(403, .expiredProviderToken) }
        if configuration.bindsKeyToConnection, let bound = state.boundKeyID, bound != keyID {
            return Rejection(403, .unrelatedKeyIdInToken)
        }
        if let current = state.currentToken, current != authorization {
            guard now - state.currentTokenSince >= minimumTokenUpdateInterval else {
                return Rejection(429, .tooManyProviderTokenUpdates)
            }
            state.tokenUpdates += 1
        }
        if state.currentToken != authorization {
            state.currentToken = authorization
            state.currentTokenSince = now
        }
        if state.boundKeyID == nil { state.boundKeyID = keyID }
        return nil
    }

    /// An integer claim: a JSON integer, or (as APNSwift sends and APNs accepts) a decimal string.
    private static func integer(_ value: Any?) -> Int64? {
        switch value {
        case let number as NSNumber where !(number is Bool):
            let double = number.doubleValue
            guard double.isFinite, double == double.rounded(), abs(double) < 1e15 else { return nil }
            return Int64(double)
        case let text as String:
            return Int64(text)
        default:
            return nil
        }
    }
}
