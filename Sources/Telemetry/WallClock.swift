/// The wall clock (UTC): the one clock for times that cross the process boundary — event `created_at` and ring
/// deadlines, provider-token `iat` and ages, APNs 410 timestamps. Injected wherever such times are compared, so
/// tests control them (`ManualWallClock` in TestSupport). Time within the process is measured on monotonic clocks
/// (``MonotonicClock``, `HTTP2Deadline`, `ContinuousClock`), and every configured span of time is a `Duration`.
package protocol WallClock: Sendable {
    func now() -> WallTime
}
