/// APNs' answer to one request, or the transport failure that replaced it, with its disposition.
public struct APNsResult: Sendable, Hashable {
    public let disposition: APNsDisposition
    /// HTTP `:status`, nil when no response arrived (timeout, connection lost, not processed).
    public let status: Int?
    /// APNs' `reason` string, or a transport reason such as `Timeout` / `ConnectionLost` / `NotProcessed`.
    public let reason: String?
    /// The `apns-id` APNs answered with (nil when it sent none, or none that is a UUID).
    public let id: APNsID?
    /// ``id``'s text (lowercase).
    public var apnsID: String? { id?.description }
    /// `apns-unique-id` (development environment only; nil unless a UUID).
    public let uniqueID: APNsID?
    /// ``uniqueID``'s text (lowercase).
    public var apnsUniqueID: String? { uniqueID?.description }
    /// For 410: when APNs learned the token was invalid, in milliseconds since the epoch.
    public let timestampMilliseconds: Int64?

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
