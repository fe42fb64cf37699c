/// What a sender must do with an APNs answer: the classes every outcome falls into.
package enum APNsDisposition: String, Hashable, Sendable, CaseIterable {
    /// 200: APNs accepted the push.
    case delivered
    /// The device token is dead for this topic (410 Unregistered/ExpiredToken, 400 BadDeviceToken,
    /// DeviceTokenNotForTopic): stop sending to it and tell the token registry.
    case tokenInvalid
    /// Transient: 429 TooManyRequests, 5xx, timeouts, lost connections, streams APNs never processed.
    case retryLater
    /// The credentials are wrong (403 family) even after one refresh: alert an operator.
    case fixCredentials
    /// The request itself is wrong (other 4xx): retrying cannot help; dead-letter it.
    case permanent
}
