/// One APNs provider token: an ES256 JWT `{"alg":"ES256","kid":…}.{"iss":…,"iat":…}.signature`.
public struct APNsProviderToken: Hashable, Sendable, CustomStringConvertible {
    /// The compact JWT.
    let jwt: String
    /// The 10-character key ID (`kid`).
    public let keyID: String
    /// The 10-character team ID (`iss`).
    public let teamID: String
    /// `iat`: seconds since the epoch.
    let issuedAt: Int64

    /// The `authorization` header value: `bearer <jwt>` (built once: every push on a connection carries it).
    public let authorizationValue: String

    init(jwt: String, keyID: String, teamID: String, issuedAt: Int64) {
        self.jwt = jwt
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = issuedAt
        self.authorizationValue = "bearer " + jwt
    }

    /// Age in seconds at `now`.
    func age(at now: Double) -> Double { now - Double(issuedAt) }

    /// Never prints the signature: the token is a credential for up to an hour.
    public var description: String { "APNsProviderToken(kid: \(keyID), iss: \(teamID), iat: \(issuedAt))" }
}
