/// How a ``BacklogScanner``'s scan ended.
struct BacklogScanOutcome: Sendable {
    enum Result: String, CaseIterable, Sendable {
        /// Every record of the range was read (or the log ended first).
        case completed
        /// `each` asked to stop (the partition was read through or revoked first).
        case stopped
        /// The range could not be read (a stalled broker, a closed scanner).
        case failed
    }

    var result: Result
    /// Why it failed (for the log); nil otherwise.
    var failure: String?

    init(_ result: Result, failure: String? = nil) {
        self.result = result
        self.failure = failure
    }
}
