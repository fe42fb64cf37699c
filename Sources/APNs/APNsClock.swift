import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time for provider tokens (JWT `iat`) and token ages; injectable so tests control time.
public protocol APNsClock: Sendable {
    /// Seconds since the UNIX epoch (UTC).
    func now() -> Double
}

