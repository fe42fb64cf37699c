public import Foundation
@preconcurrency import Glibc
import Synchronization

/// Runs other programs from tests (openssl, kcat, promtool, the callpush binary) without the pitfalls of
/// Foundation's pipe reading: both pipes are drained concurrently (a chatty child never blocks on a full pipe), and
/// reads retry on `EINTR` (Foundation's `readDataToEndOfFile` traps on it, and libdispatch's signal sources make it
/// happen in processes that spawn children).
public enum Subprocess {
    public struct Result: Sendable {
        /// Exit status, or -1 when the time limit killed it.
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// stdout followed by stderr.
        public var output: String { stdout + stderr }
    }

    /// Runs `arguments` (looked up on PATH through `/usr/bin/env` unless `executable` is given) to completion.
    /// - Parameters:
    ///   - input: written to stdin, which is then closed.
    ///   - timeoutSeconds: the child is killed after this long.
    public static func run(
        _ arguments: [String],
        executable: String = "/usr/bin/env",
        environment: [String: String]? = nil,
        currentDirectory: String? = nil,
        input: String? = nil,
        timeoutSeconds: Double = 60
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        let errorReader = BackgroundReader(stderr.fileHandleForReading)
        if let input { writeAll(Array(input.utf8), to: stdin.fileHandleForWriting) }
        try? stdin.fileHandleForWriting.close()
        let killer = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeoutSeconds, execute: killer)
        let out = readToEnd(stdout.fileHandleForReading)
        let err = errorReader.wait()
        process.waitUntilExit()
        killer.cancel()
        let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        return Result(
            status: killed ? -1 : process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self)
        )
    }

    /// Everything until end of file, retrying interrupted reads.
    public static func readToEnd(_ handle: FileHandle) -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return data
            }
        }
    }

    /// One line (without `\n`), or what is left at end of file; retries interrupted reads.
    public static func readLine(_ handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(handle.fileDescriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes everything, retrying interrupted and partial writes; gives up if the reader is gone.
    public static func writeAll(_ bytes: [UInt8], to handle: FileHandle) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(handle.fileDescriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count > 0 { offset += count } else if count < 0 && errno == EINTR { continue } else { return }
        }
    }

    /// A fresh temporary directory.
    public static func temporaryDirectory(prefix: String = "callpush-test") throws -> String {
        let path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class BackgroundReader: Sendable {
    private let data = Mutex<[UInt8]>([])
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            let bytes = Subprocess.readToEnd(handle)
            data.withLock { $0 = bytes }
            done.signal()
        }
        thread.start()
    }

    func wait() -> [UInt8] {
        done.wait()
        return data.withLock { $0 }
    }
}
