/// APNs' answer to one request, or the transport failure that replaced it, with its disposition.
public struct APNsResult: Sendable, Hashable {
    package let disposition: APNsDisposition
    /// HTTP `:status`, nil when no response arrived (timeout, connection lost, not processed).
    package let status: Int?
    /// APNs' `reason` string, or a transport reason such as `Timeout` / `ConnectionLost` / `NotProcessed`.
    package let reason: String?
    /// The `apns-id` APNs answered with (nil when it sent none, or none that is a UUID).
    package let id: APNsID?
    /// ``id``'s text (lowercase).
    package var apnsID: String? { id?.description }
    /// `apns-unique-id` (development environment only; nil unless a UUID).
    package let uniqueID: APNsID?
    /// ``uniqueID``'s text (lowercase).
    package var apnsUniqueID: String? { uniqueID?.description }
    /// For 410: when APNs learned the token was invalid, in milliseconds since the epoch.
    package let timestampMilliseconds: Int64?

    init(
        disposition: APNsDisposition,
        status: Int?,
        reason: String?,
        id: APNsID? = nil,
        uniqueID: APNsID? = nil,
        timestampMilliseconds: Int64? = nil
    ) {
        self.disposition = disposition
        self.status = status
        self.reason = reason
        self.id = id
        self.uniqueID = uniqueID
        self.timestampMilliseconds = timestampMilliseconds
    }
}
