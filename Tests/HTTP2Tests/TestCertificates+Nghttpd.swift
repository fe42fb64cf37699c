import Foundation
import TestSupport

extension TestCertificates {
    /// Starts `nghttpd` (nghttp2-server) with this certificate on a free port, its output to its log; nil when it did
    /// not come up.
    func startNghttpd(extra: [String] = []) throws -> (ChildProcess, Int)? {
        let port = FreePort.next()
        let docroot = directory + "/www"
        try? FileManager.default.createDirectory(atPath: docroot, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: docroot + "/index.html", contents: Data("hello".utf8))
        let process = try ChildProcess(extra + ["-d", docroot, "-a", "127.0.0.1", String(port), keyFile, certificateFile],
                                       executable: ExternalTool.path("nghttpd") ?? "nghttpd")
        guard FreePort.waitUntilListening(port) else {
            process.kill()
            return nil
        }
        return (process, port)
    }
}
