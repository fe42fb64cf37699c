/// The `apns-expiration` header.
package enum APNsExpiration: Hashable, Sendable {
    /// No header: APNs applies its own storage policy.
    case none
    /// `0`: one delivery attempt, not stored.
    case immediately
    /// Store and retry until this UNIX time in seconds.
    case at(secondsSinceEpoch: Int64)
}
