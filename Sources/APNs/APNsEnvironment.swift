/// Which APNs environment a push goes to. Device tokens belong to one environment: a sandbox token sent to
/// production (or the reverse) gets `400 BadDeviceToken`, so the client routes each push by its event's environment.
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `api.push.apple.com`: TestFlight, Ad Hoc and App Store builds.
    case production
    /// `api.sandbox.push.apple.com`: development builds run from Xcode.
    case sandbox

    public var description: String { rawValue }
}
