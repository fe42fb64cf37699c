/// Which kind of push the device token belongs to.
package enum CallPushKind: String, Hashable, Sendable, CaseIterable {
    /// A UserNotifications token: alert push with `mutable-content`, the Notification Service Extension rings.
    case alert
    /// A PushKit VoIP token: `apns-push-type: voip`, topic `<bundle>.voip`, CallKit rings.
    case voip
}
