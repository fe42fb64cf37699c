/// Process exit statuses shared by every command.
enum ExitStatus {
    static let success: Int32 = 0
    /// The command ran and something failed (lost events in the demo, failed produces, …).
    static let failure: Int32 = 1
    /// `send`: APNs answered and refused the push.
    static let rejected: Int32 = 2
    /// `send`: no answer from APNs (connection, TLS or timeout).
    static let unreachable: Int32 = 3
    /// Bad command line or configuration (sysexits EX_USAGE).
    static let usage: Int32 = 64
}
