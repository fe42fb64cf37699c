import EmbeddedPipeline
import Foundation
import ToolSupport

/// Runs an area that measures what `callpush run` does (``BenchArea/runsInOwnProcess``) in a `callpush-bench` process
/// of its own, started with `callpush run`'s malloc arena limit: this process keeps 2 arenas, as the in-process
/// areas stand for `callpush demo`, and would hand the area the heap of every area before it. The child's output
/// goes to this process's; its results come back through a file (``AreaResult/lines``).
///
/// Why it matters: with 2 arenas most of the pipeline's futex calls at a steady rate are glibc's arena locks, which
/// slow both the worker's latency and our producer against kcat (a process of its own with glibc's default limit);
/// the measurements are in docs/performance.md, "Memory allocator".
enum OwnProcessArea {
    static func run(_ area: BenchArea, _ options: BenchOptions) -> AreaResult {
        let arenas = ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] ?? "\(MallocArenaLimit.workerArenas)"
        print("  in a process of its own with MALLOC_ARENA_MAX=\(arenas) (as `callpush run`)")
        let resultsPath = NSTemporaryDirectory() + "callpush-bench-\(area.rawValue)-\(getpid()).txt"
        defer { unlink(resultsPath) }
        var arguments = [area.rawValue, "--seconds", "\(options.seconds)", "--repeat", "\(options.repetitions)",
                         "--results", resultsPath]
        if options.quick { arguments.append("--quick") }
        if let rate = options.latencyMaximumRate { arguments += ["--latency-max-rate", "\(rate)"] }
        if let minutes = options.soakMinutes { arguments += ["--soak-minutes", "\(minutes)"] }
        do {
            let child = try ChildProcess(
                arguments, executable: "/proc/self/exe",
                environment: ProcessInfo.processInfo.environment.merging(["MALLOC_ARENA_MAX": arenas]) { $1 },
                output: .inherit, errors: .inherit)
            let status = child.wait(timeout: .seconds(3600))
            guard let text = try? String(contentsOfFile: resultsPath, encoding: .utf8) else {
                throw BenchFailure("the \(area.rawValue) process wrote no results (exit status \(status))")
            }
            return AreaResult(lines: text.split(separator: "\n").map(String.init))
        } catch {
            print("  FAILED: \(error)")
            return AreaResult()
        }
    }

    /// In the child: writes what the area measured to `path` for the parent.
    static func write(_ result: AreaResult, to path: String) {
        let text = result.lines.joined(separator: "\n") + "\n"
        if !FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) {
            print("  FAILED: cannot write \(path)")
        }
    }
}
