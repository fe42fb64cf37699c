public import APNs

/// Sends one APNs request and always answers exactly once (transport failures become `retryLater` results).
/// ``APNsClient`` is the production implementation.
public protocol PushSender: Sendable {
    func send(
        _ request: APNsRequest,
        environment: CallEnvironment,
        completion: @escaping @Sendable (APNsResult) -> Void
    )
}
