/// One app callpush pushes to: its bundle id and the credentials APNs accepts for it.
///
/// Several apps may share one token credential (one `.p8` key serves every app of its team); a certificate app
/// has its own certificate.
package struct APNsAppConfiguration: Sendable, Hashable {
    /// The bundle id (`apns-topic` without a push type's suffix such as `.voip`); nil serves every bundle id
    /// (the single-app flags of `callpush run`).
    /// Default: none; required.
    package var bundleID: String?
    /// Token (`.p8` key, key id, team id) or certificate credentials.
    /// Default: none; required.
    package var credentials: APNsCredentials

    package init(bundleID: String?, credentials: APNsCredentials) {
        self.bundleID = bundleID
        self.credentials = credentials
    }

    /// The label of this app in per-app metrics: its bundle id, or `any` for the app that serves every bundle id.
    package var metricLabel: String { bundleID ?? "any" }
}
