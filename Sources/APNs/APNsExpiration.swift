/// The `apns-expiration` header.
public enum APNsExpiration: Hashable, Sendable {
    /// No header: APNs applies its own storage policy.
    case none
    /// `0`: one delivery attempt, not stored.
    case immediately
    /// Store and retry until this UNIX time in seconds.
    case at(secondsSinceEpoch: Int64)

    /// The header value, or nil when the header is omitted.
    var headerValue: String? {
        switch self {
        case .none: nil
        case .immediately: "0"
        case .at(let seconds): String(seconds)
        }
    }
}
