import Foundation

/// Runs the built `callpush` binary as a subprocess, the way people and scripts do.
struct CallpushProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

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

    /// Runs to completion (killed after `timeout` seconds) with `input` on stdin.
    static func run(
        _ arguments: [String],
        executable: URL = executable,
        environment: [String: String] = [:],
        input: String? = nil,
        timeout: TimeInterval = 60
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CALLPUSH_") }
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        killer.cancel()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self)
        )
    }
}
