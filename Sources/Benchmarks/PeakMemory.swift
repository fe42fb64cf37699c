import Foundation

/// The process's resident-set high-water mark (`VmHWM` in /proc/self/status).
enum PeakMemory {
    /// Peak RSS in kB, or nil where /proc is unavailable.
    static func kilobytes() -> Int? { field("VmHWM:") }

    /// Current RSS in kB (`VmRSS`), or nil where /proc is unavailable.
    static func currentKilobytes() -> Int? { field("VmRSS:") }

    private static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }

    /// Resets the high-water mark to the current RSS (`echo 5 > /proc/self/clear_refs`, Linux ≥ 4.0), so a
    /// later reading covers only what ran since. False when the kernel refused.
    @discardableResult
    static func reset() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}
