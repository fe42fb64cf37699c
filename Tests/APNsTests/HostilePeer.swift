@testable import APNsMock
import Foundation
@preconcurrency import Glibc
import TestSupport

/// `scripts/hostile-h2-peer.py` started for one test: a TLS peer whose first connection misbehaves in `mode`, with
/// the certificate of a mock APNs server (valid for 127.0.0.1) so an APNs client trusts it.
final class HostilePeer {
    let process = Process()
    let host = "127.0.0.1"
    let port: Int
    let certificate = NSTemporaryDirectory() + "callpush-hostile-" + UUID().uuidString + ".pem"
    let key: String
    private let output = Pipe()

    init(mode: String) throws {
        key = certificate + ".key"
        let server = try APNsMockServer()
        try FileManager.default.copyItem(atPath: server.certificatePath, toPath: certificate)
        try FileManager.default.copyItem(atPath: server.privateKeyPath, toPath: key)
        server.stop()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [PythonInterpreter.path(importing: ["ssl"]),
                             root.appendingPathComponent("scripts/hostile-h2-peer.py").path,
                             "--cert", certificate, "--key", key, mode]
        process.standardOutput = output
        try process.run()
        let line = Subprocess.readLine(output.fileHandleForReading)
        guard let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            process.terminate()
            throw Failure(description: "hostile-h2-peer.py printed \(line.debugDescription)")
        }
        self.port = port
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func stop() {
        if process.isRunning {
            // SIGKILL: the child inherits the test process's signal mask, in which SIGTERM may be blocked.
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: certificate)
        try? FileManager.default.removeItem(atPath: key)
    }
}
