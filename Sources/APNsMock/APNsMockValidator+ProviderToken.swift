internal import APNs
internal import Crypto
internal import Foundation

extension APNsMockValidator {
    /// Checks `authorization` as APNs does for token auth and updates the connection's token state. Returns nil
    /// when the token is accepted.
    func checkProviderToken(
        _ authorization: String?,
        keys: [String: ES256PublicKey],
        teamID: String,
        connection: APNsMockConnectionState
    ) -> Rejection? {
        guard let authorization, !authorization.isEmpty else { return Rejection(403, .missingProviderToken) }
        let invalid = Rejection(403, .invalidProviderToken)
        let scheme = "bearer "
        guard authorization.count > scheme.count, authorization.lowercased().hasPrefix(scheme) else { return invalid }
        let jwt = String(authorization.dropFirst(scheme.count))
        let keyID: String
        let issuedAt: Int64
        if let verified = connection.state.withLock({ $0.verifiedToken }), verified.jwt == jwt, keys[verified.keyID] != nil {
            (keyID, issuedAt) = (verified.keyID, verified.issuedAt)
        } else {
            switch verify(jwt, keys: keys, teamID: teamID) {
            case .none: return invalid
            case .some(let token): (keyID, issuedAt) = token
            }
            connection.state.withLock { $0.verifiedToken = (jwt, keyID, issuedAt) }
        }
        return checkAgeAndUpdates(jwt: jwt, keyID: keyID, issuedAt: issuedAt, connection: connection)
    }

    /// Decodes and verifies a JWT: ES256, a known `kid`, `iss == teamID`, an integer `iat`, a valid signature.
    /// - Returns: the key id and `iat`, or nil when it is not a valid provider token.
    private func verify(_ jwt: String, keys: [String: ES256PublicKey], teamID: String) -> (keyID: String, issuedAt: Int64)? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { return nil }
        guard header["alg"] as? String == "ES256", let keyID = header["kid"] as? String, let key = keys[keyID] else {
            return nil
        }
        guard claims["iss"] as? String == (configuration.keyTeams[keyID] ?? teamID), let issuedAt = Self.integer(claims["iat"]) else { return nil }
        let signingInput = Array(jwt.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let verified = signature.count == 64
            ? key.isValidSignature(signature, for: signingInput)
            : key.isValidDERSignature(signature, for: signingInput)
        return verified ? (keyID, issuedAt) : nil
    }

    /// The time rules: not from the future, at most an hour old, not replaced too often on one connection, and
    /// (when configured) always the key the connection started with.
    private func checkAgeAndUpdates(jwt: String, keyID: String, issuedAt: Int64, connection: APNsMockConnectionState)
        -> Rejection?
    {
        let invalid = Rejection(403, .invalidProviderToken)
        let now = configuration.clock.now()
        let age = now - Double(issuedAt)
        guard age >= -configuration.maximumTokenClockSkewSeconds else { return invalid }
        guard age <= configuration.maximumTokenAgeSeconds else { return Rejection(403, .expiredProviderToken) }

        return connection.state.withLock { state -> Rejection? in
            if configuration.bindsKeyToConnection, let bound = state.boundKeyID, bound != keyID {
                return Rejection(403, .unrelatedKeyIdInToken)
            }
            if let current = state.currentToken, current != jwt {
                guard now - state.currentTokenSince >= configuration.minimumTokenUpdateIntervalSeconds else {
                    return Rejection(429, .tooManyProviderTokenUpdates)
                }
                state.tokenUpdates += 1
            }
            if state.currentToken != jwt {
                state.currentToken = jwt
                state.currentTokenSince = now
            }
            if state.boundKeyID == nil { state.boundKeyID = keyID }
            return nil
        }
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
