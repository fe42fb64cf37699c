import BenchSupport
import Crypto
import Foundation

/// A self-signed certificate for 127.0.0.1 written to a temporary directory, shared by nghttpd and our server,
/// with a small POST body file for h2load next to it.
struct BenchCertificate: Sendable {
    let directory: String
    let certificatePath: String
    let privateKeyPath: String
    /// The request body h2load posts (`-d`), the same bytes ``HTTP2LoadGenerator`` sends.
    let bodyPath: String
    /// An empty document root for nghttpd.
    let documentRoot: String

    static func make() throws -> BenchCertificate {
        let directory = NSTemporaryDirectory() + "callpush-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory + "/www", withIntermediateDirectories: true)
        let files = try SelfSignedCertificate.generate().write(toDirectory: directory)
        let bodyPath = directory + "/body.json"
        try Data(#"{"aps":{"alert":{"title":"Incoming call","body":"Alice"},"sound":"default"}}"#.utf8)
            .write(to: URL(fileURLWithPath: bodyPath))
        return BenchCertificate(directory: directory, certificatePath: files.certificatePath,
                                privateKeyPath: files.privateKeyPath, bodyPath: bodyPath,
                                documentRoot: directory + "/www")
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
