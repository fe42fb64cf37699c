package import APNs

/// Sends pushes, each answered exactly once through its ``APNsPush/answered(_:)`` (transport failures become
/// `retryLater` results). The dispatcher hands over what one consumed batch admits in one call, so the APNs client
/// queues them under one lock and wakes each connection's event loop once. ``APNsAppRouter`` and ``APNsClient`` are
/// the production implementations.
package protocol PushSender: Sendable {
    func send(_ pushes: [APNsPush])
}
