public import APNs

/// A call event turned into an APNs request.
public struct MappedPush: Sendable {
    /// Ready to send; already checked against APNs' shape rules and size limits.
    public let request: APNsRequest
    /// `custom` keys that were dropped because the mapper writes them itself (count them, log them).
    let skippedCustomKeys: [String]
}
