/// One APNs provider token: an ES256 JWT `{"alg":"ES256","kid":…}.{"iss":…,"iat":…}.signature`.
///
/// A value with its fields in one shared object: pools copy the token into every push they submit, and a copy is then
/// one reference instead of four strings.
package struct APNsProviderToken: Hashable, Sendable, CustomStringConvertible {
    private final class Storage: Sendable {
        let jwt: String
        let keyID: String
        let teamID: String
        let issuedAt: Int64
        let authorizationValue: String

        init(jwt: String, keyID: String, teamID: String, issuedAt: Int64) {
            self.jwt = jwt
            self.keyID = keyID
            self.teamID = teamID
            self.issuedAt = issuedAt
            authorizationValue = "bearer " + jwt
        }
    }

    private let storage: Storage

    /// The compact JWT.
    var jwt: String { storage.jwt }
    /// The 10-character key ID (`kid`).
    package var keyID: String { storage.keyID }
    /// The 10-character team ID (`iss`).
    package var teamID: String { storage.teamID }
    /// `iat`: seconds since the epoch.
    var issuedAt: Int64 { storage.issuedAt }
    /// The `authorization` header value: `bearer <jwt>` (built once: every push on a connection carries it).
    package var authorizationValue: String { storage.authorizationValue }

    init(jwt: String, keyID: String, teamID: String, issuedAt: Int64) {
        storage = Storage(jwt: jwt, keyID: keyID, teamID: teamID, issuedAt: issuedAt)
    }

    /// Age in seconds at `now`.
    func age(at now: Double) -> Double { now - Double(issuedAt) }

    /// Never prints the signature: the token is a credential for up to an hour.
    package var description: String { "APNsProviderToken(kid: \(keyID), iss: \(teamID), iat: \(issuedAt))" }

    package static func == (lhs: APNsProviderToken, rhs: APNsProviderToken) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.issuedAt == rhs.issuedAt && lhs.jwt == rhs.jwt && lhs.keyID == rhs.keyID && lhs.teamID == rhs.teamID)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(jwt)
        hasher.combine(keyID)
        hasher.combine(teamID)
        hasher.combine(issuedAt)
    }
}
