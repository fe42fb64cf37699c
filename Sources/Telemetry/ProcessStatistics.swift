import Foundation

/// One reading of a process's CPU time, memory, file descriptors and threads from `/proc` (Linux).
///
/// Used by ``ProcessMetrics`` for this process and by the benchmarks for a worker they started.
package struct ProcessStatistics: Sendable {
    /// One thread: its kernel id, its name (`/proc/…/task/<id>/comm`) and the CPU time it has used.
    package struct Thread: Sendable {
        package let id: Int
        package let name: String
        package let cpuSeconds: Double
    }

    /// User + system CPU time of the whole process.
    package let cpuSeconds: Double
    package let residentBytes: Int
    package let virtualBytes: Int
    /// When the process started, in seconds since the Unix epoch (nil if the boot time cannot be read).
    package let startTimeSeconds: Double?
    package let openFileDescriptors: Int
    /// The soft limit on open file descriptors (nil when unlimited or unreadable).
    package let maximumFileDescriptors: Int?
    /// Every thread, when the reading asked for them (else empty).
    package let threads: [Thread]

    /// Reads process `process` ("self" or a pid); nil when its `/proc/…/stat` cannot be read (it has exited).
    package static func read(process: String = "self", threads readThreads: Bool = true) -> ProcessStatistics? {
        let directory = "/proc/\(process)"
        guard let stat = Stat(file: "\(directory)/stat") else { return nil }
        var threads: [Thread] = []
        if readThreads {
            for task in Self.entries("\(directory)/task") {
                guard let id = Int(task), let taskStat = Stat(file: "\(directory)/task/\(task)/stat") else { continue }
                threads.append(Thread(id: id, name: taskStat.name, cpuSeconds: taskStat.cpuSeconds))
            }
        }
        let bootTime = Self.text("/proc/stat").flatMap { text in
            text.split(separator: "\n").first { $0.hasPrefix("btime ") }.flatMap { Double($0.dropFirst(6)) }
        }
        return ProcessStatistics(
            cpuSeconds: stat.cpuSeconds, residentBytes: stat.residentPages * Int(sysconf(Int32(_SC_PAGESIZE))),
            virtualBytes: stat.virtualBytes, startTimeSeconds: bootTime.map { $0 + stat.startTicks / Stat.ticksPerSecond },
            openFileDescriptors: Self.entries("\(directory)/fd").count,
            maximumFileDescriptors: Self.openFilesLimit(Self.text("\(directory)/limits")),
            threads: threads)
    }

    /// A small file's whole text (files in `/proc` report no size: it is read to the end).
    private static func text(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// The names in a directory (none if it cannot be read).
    private static func entries(_ path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// The soft "Max open files" of a `/proc/…/limits` text.
    static func openFilesLimit(_ limits: String?) -> Int? {
        guard let line = limits?.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else { return nil }
        return line.dropFirst("Max open files".count).split(separator: " ").first.flatMap { Int($0) }
    }

    /// The fields of a `/proc/…/stat` line that matter here (proc(5): comm is field 2, in parentheses and possibly
    /// containing spaces; then state is field 3, utime 14, stime 15, starttime 22, vsize 23, rss 24).
    struct Stat {
        static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

        let name: String
        let cpuSeconds: Double
        let startTicks: Double
        let virtualBytes: Int
        let residentPages: Int

        init?(file: String) {
            guard let text = ProcessStatistics.text(file), let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
            else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            func field(_ number: Int) -> Double? { fields.count > number - 3 ? Double(fields[number - 3]) : nil }
            guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23),
                  let resident = field(24) else { return nil }
            name = String(text[text.index(after: open)..<close])
            cpuSeconds = (user + system) / Self.ticksPerSecond
            startTicks = start
            virtualBytes = Int(virtual)
            residentPages = Int(resident)
        }
    }
}
