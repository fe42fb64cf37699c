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
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { return invalid }
        guard header["alg"] as? String == "ES256", let keyID = header["kid"] as? String, let key = keys[keyID] else {
            return invalid
        }
        guard claims["iss"] as? String == teamID, let issuedAt = Self.integer(claims["iat"]) else { return invalid }
        let signingInput = Array(jwt.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let verified = signature.count == 64
            ? key.isValidSignature(signature, for: signingInput)
            : key.isValidDERSignature(signature, for: signingInput)
        guard verified else { return invalid }

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
