import Foundation
import Glibc

/// A subprocess started with `posix_spawn`, its output going to a temporary file, reaped with `wait4` so its
/// own CPU time (user + system) is known exactly, independent of any other child.
final class ChildProcess {
    /// Where the child's stdout and stderr go.
    enum Output {
        /// One temporary file, read by ``output``.
        case captured
        case discarded
        /// This process's own stdout and stderr.
        case inherited
    }

    let pid: pid_t
    let outputPath: String
    private(set) var exitStatus: Int32?
    /// CPU seconds (user + system) of the child, known once it was reaped.
    private(set) var cpuSeconds: Double = 0

    /// Starts `path` with `arguments` and this process's environment with `environment` set in it.
    /// - Throws: ``BenchFailure`` when the spawn fails.
    init(_ path: String, _ arguments: [String], output: Output = .captured, environment: [String: String] = [:])
        throws(BenchFailure)
    {
        outputPath = output == .captured
            ? NSTemporaryDirectory() + "callpush-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
            : "/dev/null"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if output != .inherited {
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, nil, argv, envp)
        guard result == 0 else { throw BenchFailure("cannot start \(path): \(String(cString: strerror(result)))") }
        pid = child
    }

    /// Waits for exit (killing the child after `timeout` seconds) and returns its output.
    @discardableResult
    func wait(timeout: Double = 600) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while exitStatus == nil {
            if reap(options: WNOHANG) { break }
            if Date() > deadline { kill(pid, SIGKILL) }
            usleep(2000)
        }
        return output
    }

    /// Sends SIGTERM (then SIGKILL after a second) and reaps the child.
    func stop() {
        guard exitStatus == nil else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(1)
        while !reap(options: WNOHANG) {
            if Date() > deadline { kill(pid, SIGKILL); _ = reap(options: 0); break }
            usleep(2000)
        }
    }

    var output: String {
        guard outputPath != "/dev/null", let data = FileManager.default.contents(atPath: outputPath) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    var isRunning: Bool { exitStatus == nil && !reap(options: WNOHANG) }

    deinit {
        stop()
        if outputPath != "/dev/null" { unlink(outputPath) }
    }

    /// True once the child has exited (and was reaped now or before).
    @discardableResult
    private func reap(options: Int32) -> Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        var usage = rusage()
        let result = wait4(pid, &status, options, &usage)
        guard result == pid else { return result < 0 }
        exitStatus = status
        cpuSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return true
    }

    /// The first line the child prints (the kafka-mock's bootstrap servers), waiting up to 10 s for it.
    func firstLine() async throws -> String {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let line = output.split(separator: "\n").first, output.contains("\n") { return String(line) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        throw BenchFailure("callpush kafka-mock printed nothing: \(output.suffix(300))")
    }
}
