/// APNs' answer to one request, or the transport failure that replaced it, with its disposition.
public struct APNsResult: Sendable, Hashable {
    public let disposition: APNsDisposition
    /// HTTP `:status`, nil when no response arrived (timeout, connection lost, not processed).
    public let status: Int?
    /// APNs' `reason` string, or a transport reason such as `Timeout` / `ConnectionLost` / `NotProcessed`.
    public let reason: String?
    /// The `apns-id` APNs answered with (lowercased).
    public let apnsID: String?
    /// `apns-unique-id` (development environment only).
    public let apnsUniqueID: String?
    /// For 410: when APNs learned the token was invalid, in milliseconds since the epoch.
    public let timestampMilliseconds: Int64?

    init(
        disposition: APNsDisposition,
        status: Int?,
        reason: String?,
        apnsID: String? = nil,
        apnsUniqueID: String? = nil,
        timestampMilliseconds: Int64? = nil
    ) {
        self.disposition = disposition
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.timestampMilliseconds = timestampMilliseconds
    }
}
