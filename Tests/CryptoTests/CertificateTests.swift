import Foundation
import Testing
import TestSupport

@testable import Crypto

@Suite struct CertificateTests {
    @Test func selfSignedCertificateVerifiesForLocalhostAndLoopback() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let generated = try SelfSignedCertificate.generate()
        let files = try generated.write(toDirectory: directory)
        #expect(generated.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        let attributes = try FileManager.default.attributesOfItem(atPath: files.privateKeyPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        for check in [["-verify_hostname", "localhost"], ["-verify_ip", "127.0.0.1"]] {
            let result = try ChildProcess.run(
                ["openssl", "verify", "-CAfile", files.certificatePath] + check + [files.certificatePath]
            )
            #expect(result.status == 0, "\(result.output)")
        }
        let wrongHost = try ChildProcess.run([
            "openssl", "verify", "-CAfile", files.certificatePath, "-verify_hostname", "example.com",
            files.certificatePath,
        ])
        #expect(wrongHost.status != 0)

        let text = try ChildProcess.run(["openssl", "x509", "-in", files.certificatePath, "-noout", "-text"])
        #expect(text.output.contains("DNS:localhost"))
        #expect(text.output.contains("IP Address:127.0.0.1"))
        #expect(text.output.contains("prime256v1"))
        #expect(text.output.contains("ecdsa-with-SHA256"))

        // The key file matches the certificate.
        let certKey = try ChildProcess.run(["openssl", "x509", "-in", files.certificatePath, "-noout", "-pubkey"])
        #expect(certKey.output == (try generated.privateKey.publicKey.pemRepresentation()))
        let reloaded = try ES256PrivateKey(pemFile: files.privateKeyPath)
        #expect(try reloaded.publicKey.pemRepresentation() == certKey.output)
    }

    @Test func customNames() throws {
        let generated = try SelfSignedCertificate.generate(
            commonName: "mock-apns", dnsNames: ["mock-apns", "api.sandbox.push.apple.com"], ipAddresses: ["10.0.0.7"]
        )
        let text = try ChildProcess.run(["openssl", "x509", "-noout", "-text"], input: generated.certificatePEM)
        #expect(text.output.contains("CN = mock-apns"))
        #expect(text.output.contains("DNS:api.sandbox.push.apple.com"))
        #expect(text.output.contains("IP Address:10.0.0.7"))
        #expect(throws: CryptoError.self) { try generated.write(toDirectory: "/nonexistent/dir") }
    }

    @Test func pkcs12ConvertsToPEM() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let generated = try SelfSignedCertificate.generate(commonName: "Apple Push Services: com.example.app")
        let files = try generated.write(toDirectory: directory)
        let p12 = directory + "/cert.p12"
        let export = try ChildProcess.run([
            "openssl", "pkcs12", "-export", "-in", files.certificatePath, "-inkey", files.privateKeyPath, "-out", p12,
            "-passout", "pass:s3cret",
        ])
        #expect(export.status == 0, "\(export.output)")

        let contents = try PKCS12Archive.contents(ofFile: p12, password: "s3cret")
        #expect(contents.certificatePEM == generated.certificatePEM)
        let key = try ES256PrivateKey(pem: contents.privateKeyPEM)
        #expect(try key.publicKey.pemRepresentation() == generated.privateKey.publicKey.pemRepresentation())
        #expect(contents.chainPEM.isEmpty)

        do {
            _ = try PKCS12Archive.contents(ofFile: p12, password: "wrong")
            Issue.record("wrong password accepted")
        } catch {
            #expect(error.code == .invalidPKCS12)
        }
        #expect(throws: CryptoError.self) { try PKCS12Archive.contents(of: [1, 2, 3], password: "") }
    }

    /// A certificate that expires in N days shows that date, as `openssl x509 -enddate` does; 9000 days reach past
    /// 2049, where X.509 switches from UTCTime to GeneralizedTime.
    @Test(arguments: [1, 20, 9000]) func validityShowsTheNotAfterOpenSSLShows(days: Int) throws {
        let generated = try SelfSignedCertificate.generate(validityDays: days)
        let validity = try CertificateValidity(pem: generated.certificatePEM)
        let shown = try ChildProcess.run(
            ["openssl", "x509", "-noout", "-enddate", "-dateopt", "iso_8601"], input: generated.certificatePEM)
        // notAfter=2026-12-20 12:47:22Z
        let text = shown.output.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("notAfter=".count)
        let date = try #require(ISO8601DateFormatter().date(from: text.replacingOccurrences(of: " ", with: "T")), "\(shown.output)")
        #expect(validity.notAfter == Int64(date.timeIntervalSince1970))
        // Generated just now with notAfter N days ahead (an hour either way for a slow machine).
        let expected = Date().timeIntervalSince1970 + Double(days) * 86_400
        #expect(abs(Double(validity.notAfter) - expected) < 3_600)
    }

    @Test func validityRefusesWhatIsNotACertificate() throws {
        let generated = try SelfSignedCertificate.generate()
        let truncated = String(generated.certificatePEM.prefix(120)) + "\n-----END CERTIFICATE-----\n"
        for text in ["", "not a certificate", generated.privateKeyPEM, truncated] {
            #expect { try CertificateValidity(pem: text) } throws: { ($0 as? CryptoError)?.code == .invalidPEM }
        }
    }
}
