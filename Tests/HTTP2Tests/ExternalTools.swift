import Foundation
import TestSupport

/// True once something accepts TCP connections on 127.0.0.1:`port` (bounded).
func waitForPort(_ port: Int, seconds: Double = 5) -> Bool {
    Eventually.blockingWaitUntil(timeout: .seconds(seconds)) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// A child process killed on `stop()` (and bounded by `timeout` when run to completion).
final class ExternalProcess: Sendable {
    let process = Process()
    let output = Pipe()

    /// - Parameter tool: a program's name, found with ``ExternalTool/path(_:)``.
    init(_ tool: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: ExternalTool.path(tool) ?? tool)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Eventually.blockingWaitUntil(timeout: .seconds(3)) { !process.isRunning }
        }
    }

    func suspend() { kill(process.processIdentifier, SIGSTOP) }

    /// Waits for exit (bounded); returns (status, output) or nil on timeout (the process is killed).
    func finish(timeout seconds: Double) -> (Int32, String)? {
        let exited = Eventually.blockingWaitUntil(timeout: .seconds(seconds)) { !process.isRunning }
        if !exited {
            stop()
            return nil
        }
        let data = Subprocess.readToEnd(output.fileHandleForReading)
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// Starts `nghttpd` with the test certificate on a free port; nil when it did not come up.
func startNghttpd(certificates: TestCertificates, extra: [String] = []) throws -> (ExternalProcess, Int)? {
    let port = FreePort.next()
    let docroot = certificates.directory + "/www"
    try? FileManager.default.createDirectory(atPath: docroot, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: docroot + "/index.html", contents: Data("hello".utf8))
    let process = try ExternalProcess("nghttpd", extra + ["-d", docroot, "-a", "127.0.0.1", String(port),
                                                                  certificates.keyFile, certificates.certificateFile])
    guard waitForPort(port) else {
        process.stop()
        return nil
    }
    return (process, port)
}
