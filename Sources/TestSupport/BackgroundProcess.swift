public import Foundation
@preconcurrency import Glibc

/// A long-running program a test starts beside itself (a mock broker, a mock APNs server, a worker): its first
/// stdout line (servers print where they listen), control lines on stdin, a log file of what else it wrote, and
/// stopping it by SIGTERM or SIGKILL. Killed when released.
public final class BackgroundProcess: Sendable {
    public let process = Process()
    /// The first stdout line; empty when it was not read.
    public let firstLine: String
    private let stdout = Pipe()
    private let stdin = Pipe()

    /// Where stdout (when not read) and stderr go, for diagnosing a failed test.
    public let logPath = FileManager.default.temporaryDirectory
        .appendingPathComponent("callpush-\(UUID().uuidString.prefix(8)).log").path

    /// - Parameters:
    ///   - executable: the program (`/usr/bin/env` looks the first argument up on PATH).
    ///   - readFirstLine: wait for the first stdout line; otherwise stdout goes to the log.
    public init(_ arguments: [String], executable: URL, readFirstLine: Bool = true) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = stdin
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath) ?? FileHandle.nullDevice
        process.standardOutput = readFirstLine ? stdout : log
        process.standardError = log
        try process.run()
        guard readFirstLine else {
            firstLine = ""
            return
        }
        firstLine = Subprocess.readLine(stdout.fileHandleForReading)
    }

    /// Writes a control line to stdin and returns the answer's lines, up to and including the first line equal to
    /// `last` (a line starting with `error` ends it too; `nil`: the answer is one line).
    public func control(_ line: String, until last: String? = "ok") -> [String] {
        Subprocess.writeAll(Array((line + "\n").utf8), to: stdin.fileHandleForWriting)
        var lines: [String] = []
        while true {
            let answer = Subprocess.readLine(stdout.fileHandleForReading)
            lines.append(answer)
            if last == nil || answer == last || answer.hasPrefix("error") || answer.isEmpty { return lines }
        }
    }

    /// Sends SIGTERM and waits up to 15 s; returns the exit status (or -1 when it had to be killed).
    @discardableResult
    public func terminate() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        Eventually.blockingWaitUntil(timeout: .seconds(15), interval: .milliseconds(20)) { !process.isRunning }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    /// SIGKILL, as a crash or an OOM kill would.
    public func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// What the process wrote (stderr, and stdout when it was not read).
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The last lines of ``log``.
    public var logTail: String { log.split(separator: "\n").suffix(20).joined(separator: "\n") }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: logPath)
    }
}
