import Foundation
import TestSupport
@preconcurrency import Glibc

/// A long-running `callpush` subcommand (kafka-mock, mock-apns) started for a test; its first stdout line is
/// where it listens.
final class BackgroundProcess: Sendable {
    let process = Process()
    let firstLine: String
    private let stdout = Pipe()
    private let stdin = Pipe()

    /// - Parameter readFirstLine: wait for the first stdout line (servers print where they listen); otherwise
    ///   stdout is discarded.
    /// Where stdout (when not read) and stderr go, for diagnosing a failed test.
    let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("callpush-\(UUID().uuidString.prefix(8)).log").path

    /// - Parameter executable: the program (`callpush` unless given; `/usr/bin/env` looks the first argument up).
    init(_ arguments: [String], executable: URL = CallpushProcess.executable, readFirstLine: Bool = true,
         timeout: TimeInterval = 30) throws {
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

    /// Writes a control line to stdin (mock-apns) and returns the answer's lines, up to and including the first
    /// line equal to `last` (a line starting with `error` ends it too; `nil`: the answer is one line).
    func control(_ line: String, until last: String? = "ok") -> [String] {
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
    func terminate() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    /// SIGKILL, as a crash or an OOM kill would.
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// What the process wrote (stderr, and stdout when it was not read).
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The last lines of ``log``.
    var logTail: String { log.split(separator: "\n").suffix(20).joined(separator: "\n") }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

/// Runs an external tool (kcat, openssl, …) to completion.
enum Tool {
    static func run(_ arguments: [String], input: String? = nil, timeout: TimeInterval = 30) throws -> (status: Int32, output: String) {
        let result = try Subprocess.run(arguments, input: input, timeoutSeconds: timeout)
        return (result.status, result.output)
    }
}
