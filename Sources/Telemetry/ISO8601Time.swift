@preconcurrency import Glibc
import Foundation

/// Formats instants as RFC 3339 UTC timestamps with milliseconds, without Foundation's formatter cost.
enum ISO8601Time {
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        let millis = Int((interval - Double(seconds)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis
        )
    }
}
