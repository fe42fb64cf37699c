import Foundation

/// The 1/5/15-minute load averages, printed with results since other work on the machine skews them.
enum LoadAverage {
    static var text: String {
        guard let line = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
        return line.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
