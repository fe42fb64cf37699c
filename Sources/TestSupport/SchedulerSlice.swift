import Foundation

/// The CPU time slice the kernel shows for a thread: the `se.slice` line of a `/proc/…/sched` file (Linux 6.12+ with
/// scheduler debug information).
package enum SchedulerSlice {
    /// The value of the `se.slice` line in the sched file at `path` (nanoseconds, as the kernel prints it); nil when
    /// the file cannot be read or has no such line.
    package static func value(inSchedFile path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("se.slice") })
        else { return nil }
        return line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces)
    }
}
