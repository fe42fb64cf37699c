/// What ``APNsTokenCache/invalidate(ifMatches:)`` did.
enum APNsTokenInvalidation: Hashable, Sendable {
    /// The token was current; the next ``APNsTokenCache/token()`` mints a new one.
    case willRemint
    /// Another caller already replaced (or invalidated) that token: just use the current one.
    case alreadyReplaced
    /// The token is younger than the minimum age, so a new token would break APNs' 20-minute rule and would carry
    /// nearly the same `iat`. APNs calling a fresh token expired points at a wrong clock or key: fix credentials.
    case tooRecent
}
