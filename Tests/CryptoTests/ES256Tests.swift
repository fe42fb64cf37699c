import Foundation
import Testing
import TestSupport

@testable import Crypto

@Suite struct ES256Tests {
    @Test func generatedKeyRoundTripsThroughPEM() throws {
        let key = try ES256PrivateKey.generate()
        let pem = try key.pemRepresentation()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try ES256PrivateKey(pem: pem)
        #expect(try reloaded.publicKey.pemRepresentation() == key.publicKey.pemRepresentation())
        let publicPEM = try key.publicKey.pemRepresentation()
        #expect(publicPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        _ = try ES256PublicKey(pem: publicPEM)
    }

    @Test func signatureIsRaw64BytesAndVerifies() throws {
        let key = try ES256PrivateKey.generate()
        let message = Array("header.claims".utf8)
        for _ in 0..<20 {
            let signature = try key.signature(for: message)
            #expect(signature.count == 64)
            #expect(key.publicKey.isValidSignature(signature, for: message))
            #expect(!key.publicKey.isValidSignature(signature, for: Array("header.claimz".utf8)))
            var tampered = signature
            tampered[10] ^= 0x01
            #expect(!key.publicKey.isValidSignature(tampered, for: message))
        }
        #expect(!key.publicKey.isValidSignature([1, 2, 3], for: message))
        let other = try ES256PrivateKey.generate()
        #expect(!other.publicKey.isValidSignature(try key.signature(for: message), for: message))
    }

    @Test func rawAndDERConvertBothWays() throws {
        let key = try ES256PrivateKey.generate()
        let message = Array("abc".utf8)
        let der = try key.derSignature(for: message)
        #expect(der.first == 0x30)
        let raw = try ECDSASignatureEncoding.raw(fromDER: der)
        #expect(try ECDSASignatureEncoding.der(fromRaw: raw) == der)
        #expect(key.publicKey.isValidDERSignature(der, for: message))
    }

    @Test func readsP8FileWrittenByOpenSSL() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/AuthKey_TEST.p8"
        let result = try ChildProcess.run([
            "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path,
        ])
        #expect(result.status == 0, "\(result.output)")
        let key = try ES256PrivateKey(pemFile: path)
        let signature = try key.signature(for: [1, 2, 3])
        #expect(key.publicKey.isValidSignature(signature, for: [1, 2, 3]))
    }

    @Test func opensslVerifiesOurSignature() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = try ES256PrivateKey.generate()
        let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJUIn0".utf8)
        let raw = try key.signature(for: message)
        // Convert our r‖s back to DER so that `openssl dgst -verify` can check it.
        let der = try ECDSASignatureEncoding.der(fromRaw: raw)
        try Data(message).write(to: URL(fileURLWithPath: directory + "/message"))
        try Data(der).write(to: URL(fileURLWithPath: directory + "/sig.der"))
        try key.publicKey.pemRepresentation().write(toFile: directory + "/pub.pem", atomically: true, encoding: .utf8)
        let good = try ChildProcess.run([
            "openssl", "dgst", "-sha256", "-verify", directory + "/pub.pem", "-signature", directory + "/sig.der",
            directory + "/message",
        ])
        #expect(good.status == 0, "\(good.output)")
        #expect(good.output.contains("Verified OK"))
        try Data(Array("tampered".utf8)).write(to: URL(fileURLWithPath: directory + "/message"))
        let bad = try ChildProcess.run([
            "openssl", "dgst", "-sha256", "-verify", directory + "/pub.pem", "-signature", directory + "/sig.der",
            directory + "/message",
        ])
        #expect(bad.status != 0)
    }

    @Test func rejectsGarbageAndNonP256Keys() throws {
        #expect(throws: CryptoError.self) { try ES256PrivateKey(pem: "not a key") }
        #expect(throws: CryptoError.self) { try ES256PublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n") }
        #expect(throws: CryptoError.self) { try ES256PrivateKey(pemFile: "/nonexistent/key.p8") }
        let rsa = try ChildProcess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"])
        #expect(rsa.status == 0)
        do {
            _ = try ES256PrivateKey(pem: rsa.output)
            Issue.record("an RSA key was accepted")
        } catch {
            #expect(error.code == .unsupportedKey)
            #expect(!error.isRetriable)
        }
        do {
            _ = try ES256PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nZm9v\n-----END PRIVATE KEY-----\n")
            Issue.record("garbage was accepted")
        } catch {
            #expect(error.code == .invalidPEM)
            #expect(!error.openSSLErrors.isEmpty)
            #expect(error.description.contains("Crypto.invalidPEM"))
        }
    }

    @Test func concurrentSigningIsSafe() async throws {
        let key = try ES256PrivateKey.generate()
        let message = Array("concurrent".utf8)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<50 where !key.publicKey.isValidSignature(try key.signature(for: message), for: message) {
                        return false
                    }
                    return true
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}
