internal import APNs

/// A ``PushSender`` that also takes several pushes in one call: the dispatcher sends what one consumed batch admits
/// together, so the APNs client queues them under one lock and hands them to each connection's event loop at once
/// (one wake-up) instead of once per push. ``APNsAppRouter`` and ``APNsClient`` are such senders.
protocol BatchPushSender: PushSender {
    /// Sends each submission as ``PushSender/send(_:environment:completion:)`` would.
    func send(_ submissions: [APNsSubmission])
}
