import Foundation
import Glibc

/// One reading of a process's memory from `/proc/<pid>/status`: resident set now and at its peak, split into
/// anonymous memory (heap, stacks, relocated data) and file pages (the mapped binary and shared libraries), and
/// its thread count.
struct ProcessMemory: Sendable {
    /// `VmRSS` in kB.
    var residentKilobytes: Int
    /// `VmHWM` in kB: the peak resident set since start (or since the last reset of the mark).
    var peakKilobytes: Int
    /// `RssAnon` in kB.
    var anonymousKilobytes: Int
    /// `RssFile` in kB.
    var fileKilobytes: Int
    /// `Threads`.
    var threads: Int

    /// The reading of process `pid` (this process when nil), or nil where `/proc` cannot be read.
    static func read(pid: pid_t? = nil) -> ProcessMemory? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let status = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var fields: [Substring: Int] = [:]
        for line in status.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon]
            guard ["VmRSS", "VmHWM", "RssAnon", "RssFile", "Threads"].contains(name) else { continue }
            fields[name] = Int(line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        guard let resident = fields["VmRSS"], let peak = fields["VmHWM"] else { return nil }
        return ProcessMemory(residentKilobytes: resident, peakKilobytes: peak, anonymousKilobytes: fields["RssAnon"] ?? 0,
                             fileKilobytes: fields["RssFile"] ?? 0, threads: fields["Threads"] ?? 0)
    }

    /// E.g. `RSS 32.1 MB (anonymous 4.7 MB, files 27.4 MB), peak 40.2 MB, 18 threads`.
    var summary: String {
        "RSS \(BenchFormat.megabytes(residentKilobytes)) (anonymous \(BenchFormat.megabytes(anonymousKilobytes)), files "
            + "\(BenchFormat.megabytes(fileKilobytes))), peak \(BenchFormat.megabytes(peakKilobytes)), \(threads) threads"
    }
}
