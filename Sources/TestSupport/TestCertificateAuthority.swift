import Foundation

/// A certificate authority made with the `openssl` CLI, for tests of client-certificate authentication: a
/// self-signed P-256 CA and the client certificates it signs (as Apple's CA signs an APNs push certificate).
/// Independent of the code under test: nothing here goes through callpush's own certificate code.
package struct TestCertificateAuthority: Sendable {
    /// Why `openssl` failed.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The CA certificate, PEM: what a server trusts as its client CA.
    package let certificatePath: String
    package let privateKeyPath: String
    private let directory: String

    /// Makes a CA called `name` (subject `CN=<name>`) in `directory`, valid for two days.
    package init(directory: String, name: String) throws {
        self.directory = directory
        certificatePath = "\(directory)/\(name)-ca.pem"
        privateKeyPath = "\(directory)/\(name)-ca-key.pem"
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", privateKeyPath, "-out", certificatePath, "-days", "2", "-subj", "/CN=\(name)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    /// A client certificate with subject `CN=<commonName>` signed by this CA, and its new P-256 key, written as
    /// `<name>.pem` and `<name>-key.pem`.
    package func issueClientCertificate(_ name: String, commonName: String) throws
        -> (certificatePath: String, privateKeyPath: String)
    {
        let certificate = "\(directory)/\(name).pem"
        let key = "\(directory)/\(name)-key.pem"
        try Self.openssl([
            "req", "-x509", "-CA", certificatePath, "-CAkey", privateKeyPath, "-newkey", "ec",
            "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
            "-subj", "/CN=\(commonName)", "-addext", "basicConstraints=critical,CA:FALSE",
            "-addext", "extendedKeyUsage=clientAuth",
        ])
        return (certificate, key)
    }

    /// The SHA-256 fingerprint of the certificate in `path` as `openssl x509 -fingerprint -sha256` computes it,
    /// in lowercase hex without colons.
    package static func fingerprint(ofCertificate path: String) throws -> String {
        let output = try openssl(["x509", "-in", path, "-noout", "-fingerprint", "-sha256"])
        guard let value = output.split(separator: "=").last else { throw Failure(description: "no fingerprint: \(output)") }
        return value.filter { $0 != ":" && !$0.isWhitespace }.lowercased()
    }

    @discardableResult
    private static func openssl(_ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(["openssl"] + arguments, timeoutSeconds: 30)
        guard result.status == 0 else {
            throw Failure(description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(result.stderr)")
        }
        return result.stdout
    }
}
