/// Why the read-ahead let incoming calls go before it knew the stop events it was waiting for (the `reason` label of
/// `callpush_read_ahead_released_early_total`).
enum ReadAheadCutShort: String, CaseIterable, Sendable {
    /// A lane, or all lanes together, held as many as ``ReadAheadConfiguration`` allows.
    case limit
    /// The calls partition delivered nothing for ``ReadAheadConfiguration/timeout``.
    case timeout
    /// Retry-tier records waited for a history scan that failed.
    case historyScanFailed = "history_scan_failed"
}
