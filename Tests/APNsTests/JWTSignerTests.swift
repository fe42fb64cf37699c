@testable import APNs
import Foundation
import Testing
import TestSupport

@testable import Crypto

@Suite struct JWTSignerTests {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"

    @Test func mintsES256TokenWithExpectedShape() throws {
        let key = try ES256PrivateKey.generate()
        let signer = JWTSigner(privateKey: key, keyID: Self.keyID, teamID: Self.teamID)
        let token = try signer.makeToken(issuedAt: 1_764_489_600)
        let parts = token.jwt.split(separator: ".")
        #expect(parts.count == 3)
        let header = try #require(Base64URL.decode(parts[0]))
        let claims = try #require(Base64URL.decode(parts[1]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"iss":"DEF123GHIJ","iat":1764489600}"#)
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)))
        #expect(token.authorizationValue == "bearer " + token.jwt)
        #expect(!token.description.contains(String(parts[2])))
        #expect(!token.jwt.contains("="))
    }

    @Test func pyJWTVerifiesOurToken() throws {
        let key = try ES256PrivateKey.generate()
        let signer = JWTSigner(privateKey: key, keyID: Self.keyID, teamID: Self.teamID)
        let now = Int64(Date().timeIntervalSince1970)
        let token = try signer.makeToken(issuedAt: now)
        let script = """
            import sys, jwt
            pem = sys.stdin.read()
            token = sys.argv[1]
            header = jwt.get_unverified_header(token)
            assert header == {"alg": "ES256", "kid": "\(Self.keyID)"}, header
            claims = jwt.decode(token, pem, algorithms=["ES256"], options={"require": ["iss", "iat"]}, issuer="\(Self.teamID)")
            assert claims["iat"] == \(now), claims
            try:
                jwt.decode(token[:-4] + ("AAAA" if token[-4:] != "AAAA" else "BBBB"), pem, algorithms=["ES256"])
                print("TAMPERED-ACCEPTED")
            except jwt.InvalidSignatureError:
                pass
            print("OK")
            """
        let result = try ChildProcess.run(
            [PythonInterpreter.path, "-c", script, token.jwt], input: try key.publicKey.pemRepresentation()
        )
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("OK"))
        #expect(!result.output.contains("TAMPERED-ACCEPTED"))
    }

    @Test func opensslVerifiesTokenSignature() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = try ES256PrivateKey.generate()
        let token = try JWTSigner(privateKey: key, keyID: Self.keyID, teamID: Self.teamID).makeToken(issuedAt: 1)
        let parts = token.jwt.split(separator: ".")
        let der = try ECDSASignatureEncoding.der(fromRaw: try #require(Base64URL.decode(parts[2])))
        try Data("\(parts[0]).\(parts[1])".utf8).write(to: URL(fileURLWithPath: directory + "/input"))
        try Data(der).write(to: URL(fileURLWithPath: directory + "/sig.der"))
        try key.publicKey.pemRepresentation().write(toFile: directory + "/pub.pem", atomically: true, encoding: .utf8)
        let result = try ChildProcess.run([
            "openssl", "dgst", "-sha256", "-verify", directory + "/pub.pem", "-signature", directory + "/sig.der",
            directory + "/input",
        ])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func jsonEscapesIdentifiers() {
        #expect(JWTSignerTests.escape("a\"b\\c") == #""a\"b\\c""#)
    }

    static func escape(_ text: String) -> String {
        // JWTSigner.jsonString is internal; check through a token's header instead.
        guard let key = try? ES256PrivateKey.generate(),
            let token = try? JWTSigner(privateKey: key, keyID: text, teamID: "T").makeToken(issuedAt: 0),
            let header = Base64URL.decode(token.jwt.split(separator: ".")[0])
        else { return "" }
        let json = String(decoding: header, as: UTF8.self)
        return String(json.dropFirst(#"{"alg":"ES256","kid":"#.count).dropLast())
    }

    @Test func credentialsLoadKeys() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = try ES256PrivateKey.generate()
        let pem = try key.pemRepresentation()
        let path = directory + "/AuthKey_ABC123DEFG.p8"
        try pem.write(toFile: path, atomically: true, encoding: .utf8)
        for credentials in [
            APNsCredentials.token(keyPath: path, keyID: Self.keyID, teamID: Self.teamID),
            APNsCredentials.token(keyPEM: pem, keyID: Self.keyID, teamID: Self.teamID),
        ] {
            #expect(credentials.usesProviderToken)
            guard case .token(let token) = credentials.kind else {
                Issue.record("not token credentials")
                continue
            }
            let signer = try token.makeSigner()
            #expect(try signer.privateKey.publicKey.pemRepresentation() == key.publicKey.pemRepresentation())
            #expect(!token.redactedDescription.contains("BEGIN"))
        }
        let missing = APNsCredentials.token(keyPath: directory + "/nope.p8", keyID: "K", teamID: "T")
        guard case .token(let token) = missing.kind else { return }
        #expect(throws: CryptoError.self) { try token.makeSigner() }
    }

    @Test func certificateCredentialsLoadPEMAndPKCS12() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let generated = try SelfSignedCertificate.generate(commonName: "Apple Push Services: com.example.app")
        let files = try generated.write(toDirectory: directory)
        let p12 = directory + "/push.p12"
        let export = try ChildProcess.run([
            "openssl", "pkcs12", "-export", "-in", files.certificatePath, "-inkey", files.privateKeyPath, "-out", p12,
            "-passout", "pass:pw",
        ])
        #expect(export.status == 0)
        for credentials in [
            APNsCredentials.certificate(certificatePath: files.certificatePath, privateKeyPath: files.privateKeyPath),
            APNsCredentials.certificate(pkcs12Path: p12, password: "pw"),
        ] {
            #expect(!credentials.usesProviderToken)
            guard case .certificate(let certificate) = credentials.kind else { continue }
            let pem = try certificate.loadPEM()
            #expect(pem.certificatePEM == generated.certificatePEM)
            let key = try ES256PrivateKey(pem: pem.privateKeyPEM)
            #expect(try key.publicKey.pemRepresentation() == generated.privateKey.publicKey.pemRepresentation())
        }
    }

    @Test func endpoints() {
        #expect(APNsEndpoint.production.authority == "api.push.apple.com")
        #expect(APNsEndpoint.production.port == 443)
        #expect(APNsEndpoint.sandbox.host == "api.sandbox.push.apple.com")
        #expect(APNsEndpoint.sandbox.isSandbox && !APNsEndpoint.sandbox.isProduction)
        let custom = APNsEndpoint.custom(host: "127.0.0.1", port: 8443, caFile: "/tmp/ca.pem")
        #expect(custom.authority == "127.0.0.1:8443")
        #expect(custom.caFile == "/tmp/ca.pem")
    }
}
