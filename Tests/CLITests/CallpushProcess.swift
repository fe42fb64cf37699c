import Foundation
import TestSupport

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

    /// Runs `executable` (callpush by default) to completion (killed after `timeout` seconds) with `input` on stdin.
    static func run(
        _ arguments: [String],
        executable: URL = CallpushProcess.executable,
        environment: [String: String] = [:],
        input: String? = nil,
        timeout: TimeInterval = 60
    ) throws -> Result {
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CALLPUSH_") }
        for (key, value) in environment { merged[key] = value }
        let result = try Subprocess.run(arguments, executable: executable.path, environment: merged, input: input,
                                        timeoutSeconds: timeout)
        return Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// ``run(_:executable:environment:input:timeout:)`` on a thread of its own, for a child that runs for tens of
    /// seconds: a test blocked in `run` holds one of the two threads Swift's concurrency pool has on two cores, and the
    /// async tests running beside it (Kafka flushes, waits) starve.
    static func runOffPool(
        _ arguments: [String], executable: URL = CallpushProcess.executable, environment: [String: String] = [:],
        timeout: TimeInterval = 60
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result {
                    try run(arguments, executable: executable, environment: environment, timeout: timeout)
                })
            }.start()
        }
    }
}
