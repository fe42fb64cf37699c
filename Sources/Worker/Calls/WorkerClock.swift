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
}

