import Foundation
import TestSupport

/// The built `callpush` binary run as a subprocess, the way people and scripts do: to completion
/// (``run(_:executable:environment:input:timeout:)``), or as a long-running subcommand (kafka-mock, mock-apns, run) beside the test, whose first stdout line is where it
/// listens, that answers control lines on stdin, and whose stderr (and stdout when not read) goes to a log.
final class CallpushProcess: Sendable {
    let child: ChildProcess
    /// The first stdout line; empty when it was not read.
    let firstLine: String

    /// `.build/<config>/callpush`, next to the test bundle.
    static var executable: URL { executable(named: "callpush") }

    /// `.build/<config>/<name>` (a product of this package), next to the test bundle.
    static func executable(named name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while directory.path != "/" && !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    /// A server that ended, or printed nothing within a minute, instead of saying where it listens.
    struct NoFirstLine: Error, CustomStringConvertible {
        let command: String
        let logTail: String
        var description: String { "\(command) printed no first line (where it listens); its log ends:\n\(logTail)" }
    }

    /// Starts `executable` (callpush by default; another server started the same way may be given).
    /// - Parameter readFirstLine: waits (up to a minute) for the first stdout line, and throws ``NoFirstLine`` (the
    ///   child killed) when none comes; otherwise stdout goes to the log.
    init(_ arguments: [String], executable: URL = CallpushProcess.executable, readFirstLine: Bool = true) throws {
        child = try ChildProcess(arguments, executable: executable.path, input: .pipe, output: readFirstLine ? .pipe : .log,
                                 errors: .log)
        guard readFirstLine else {
            firstLine = ""
            return
        }
        guard let line = child.readLine(timeout: .seconds(60)) else {
            child.kill()
            throw NoFirstLine(command: ([executable.lastPathComponent] + arguments.prefix(2)).joined(separator: " "),
                              logTail: child.logTail)
        }
        firstLine = line
    }

    var pid: pid_t { child.pid }
    var log: String { child.log }
    var logTail: String { child.logTail }
    var logPath: String { child.logPath ?? "" }

    /// Writes a control line to stdin and returns the answer's lines, up to and including the first line equal to
    /// `last` (a line starting with `error` ends it too, and so does end of file; `nil`: the answer is one line).
    func control(_ line: String, until last: String? = "ok") -> [String] {
        child.write(line + "\n")
        var lines: [String] = []
        while let answer = child.readLine(timeout: .seconds(60)) {
            lines.append(answer)
            if last == nil || answer == last || answer.hasPrefix("error") { break }
        }
        return lines
    }

    /// SIGTERM, then SIGKILL after 15 s; the exit status, or -1 when it had to be killed.
    @discardableResult
    func terminate() -> Int32 { child.terminate(grace: .seconds(15)) }

    /// SIGKILL, as a crash or an OOM kill would.
    func kill() { child.kill() }

    /// Runs `executable` (callpush by default) to completion (killed after `timeout` seconds) with `input` on stdin,
    /// in this process's environment without the `CALLPUSH_` variables a developer's shell may set, plus `environment`.
    static func run(
        _ arguments: [String],
        executable: URL = CallpushProcess.executable,
        environment: [String: String] = [:],
        input: String? = nil,
        timeout: TimeInterval = 60
    ) throws -> ProcessResult {
        let merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CALLPUSH_") }.merging(environment) { $1 }
        return try ChildProcess.run(arguments, executable: executable.path, environment: merged, input: input,
                                    timeoutSeconds: timeout)
    }

    /// ``run(_:executable:environment:input:timeout:)`` on a thread of its own, for a child that runs for tens of
    /// seconds: a test blocked in `run` holds one of the two threads Swift's concurrency pool has on two cores, and the
    /// async tests running beside it (Kafka flushes, waits) starve.
    static func runOffPool(
        _ arguments: [String], executable: URL = CallpushProcess.executable, environment: [String: String] = [:],
        timeout: TimeInterval = 60
    ) async throws -> ProcessResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result {
                    try run(arguments, executable: executable, environment: environment, timeout: timeout)
                })
            }.start()
        }
    }
}
