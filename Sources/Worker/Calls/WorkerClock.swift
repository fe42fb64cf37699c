import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time in milliseconds since the UNIX epoch (event deadlines are epoch times).
/// Injected everywhere time matters so tests control it.
public protocol WorkerClock: Sendable {
    func nowMilliseconds() -> Int64
    /// The same clock in microseconds, for durations shorter than a millisecond (the worker's own time per event).
    /// Default: ``nowMilliseconds()`` × 1000.
    func nowMicroseconds() -> Int64
}

extension WorkerClock {
    public func nowMicroseconds() -> Int64 { nowMilliseconds() * 1000 }
}

