/// Severity of a log line, ordered from the most verbose to the most severe.
package enum LogLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    case trace, debug, info, notice, warning, error, critical

    /// Parses `trace`, `debug`, `info`, `notice`, `warning` (or `warn`), `error`, `critical`.
    package init?(name: String) {
        switch name.lowercased() {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning", "warn": self = .warning
        case "error": self = .error
        case "critical": self = .critical
        default: return nil
        }
    }

    package var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
