@testable import APNsMock
import Foundation
import TestSupport

/// `scripts/hostile-h2-peer.py` started for one test: a TLS peer whose first connection misbehaves in `mode`, with
/// the certificate of a mock APNs server (valid for 127.0.0.1) so an APNs client trusts it.
final class HostilePeer {
    let process: ChildProcess
    let host = "127.0.0.1"
    let port: Int
    let certificate = NSTemporaryDirectory() + "callpush-hostile-" + UUID().uuidString + ".pem"
    let key: String

    init(mode: String) throws {
        key = certificate + ".key"
        let server = try APNsMockServer()
        try FileManager.default.copyItem(atPath: server.certificatePath, toPath: certificate)
        try FileManager.default.copyItem(atPath: server.privateKeyPath, toPath: key)
        server.stop()
        process = try ChildProcess([PythonInterpreter.path(importing: ["ssl"]),
                                    PackageRoot.url.appendingPathComponent("scripts/hostile-h2-peer.py").path,
                                    "--cert", certificate, "--key", key, mode],
                                   output: .pipe, errors: .inherit)
        let line = process.readLine(timeout: .seconds(60)) ?? ""
        guard let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            process.kill()
            throw Failure(description: "hostile-h2-peer.py printed \(line.debugDescription)")
        }
        self.port = port
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func stop() {
        process.kill()
        try? FileManager.default.removeItem(atPath: certificate)
        try? FileManager.default.removeItem(atPath: key)
    }
}
