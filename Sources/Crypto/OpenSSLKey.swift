internal import COpenSSL

/// Owns one `EVP_PKEY` (freed once in `deinit`).
///
/// - Important: the key is never mutated after creation. OpenSSL 3 allows concurrent signing and
///   verification with one `EVP_PKEY` (each operation makes its own `EVP_MD_CTX`), which is why this
///   pointer wrapper is `@unchecked Sendable`.
final class OpenSSLKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    /// True for an EC key on P-256 (prime256v1).
    var isP256: Bool {
        EVP_PKEY_get_base_id(pointer) == COpenSSL_EVP_PKEY_EC() && EVP_PKEY_get_bits(pointer) == 256
    }

    /// Parses a PEM private key (PKCS#8 `BEGIN PRIVATE KEY`, or the traditional `BEGIN EC PRIVATE KEY`).
    static func privateKey(pem: [UInt8]) throws(CryptoError) -> OpenSSLKey {
        OpenSSLErrorStack.clear()
        let bio = try OpenSSLMemoryBIO(reading: pem)
        guard let key = PEM_read_bio_PrivateKey(bio.pointer, nil, nil, nil) else {
            throw .openSSL(.invalidPEM, "not a PEM private key")
        }
        return OpenSSLKey(taking: key)
    }

    /// Parses a PEM public key (`BEGIN PUBLIC KEY`, SubjectPublicKeyInfo).
    static func publicKey(pem: [UInt8]) throws(CryptoError) -> OpenSSLKey {
        OpenSSLErrorStack.clear()
        let bio = try OpenSSLMemoryBIO(reading: pem)
        guard let key = PEM_read_bio_PUBKEY(bio.pointer, nil, nil, nil) else {
            throw .openSSL(.invalidPEM, "not a PEM public key")
        }
        return OpenSSLKey(taking: key)
    }

    /// A new P-256 key.
    static func generateP256() throws(CryptoError) -> OpenSSLKey {
        OpenSSLErrorStack.clear()
        guard let key = COpenSSL_EVP_EC_gen("P-256") else {
            throw .openSSL(.keyGenerationFailed, "EVP_EC_gen(P-256) failed")
        }
        return OpenSSLKey(taking: key)
    }

    /// PKCS#8 PEM of the private key, unencrypted.
    func privateKeyPEM() throws(CryptoError) -> String {
        let bio = try OpenSSLMemoryBIO()
        guard PEM_write_bio_PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw .openSSL(.invalidPEM, "PEM_write_bio_PrivateKey failed")
        }
        return bio.string()
    }

    /// SubjectPublicKeyInfo PEM of the public half.
    func publicKeyPEM() throws(CryptoError) -> String {
        let bio = try OpenSSLMemoryBIO()
        guard PEM_write_bio_PUBKEY(bio.pointer, pointer) == 1 else {
            throw .openSSL(.invalidPEM, "PEM_write_bio_PUBKEY failed")
        }
        return bio.string()
    }

    /// A DER ECDSA signature over SHA-256(`message`).
    func signSHA256(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        OpenSSLErrorStack.clear()
        guard let context = EVP_MD_CTX_new() else { throw .openSSL(.signingFailed, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            throw .openSSL(.signingFailed, "EVP_DigestSignInit failed")
        }
        var length = 0
        let sized = message.withUnsafeBufferPointer { EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }
        guard sized == 1, length > 0 else { throw .openSSL(.signingFailed, "EVP_DigestSign (size) failed") }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBufferPointer { input in
            signature.withUnsafeMutableBufferPointer { output in
                EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard signed == 1 else { throw .openSSL(.signingFailed, "EVP_DigestSign failed") }
        return Array(signature.prefix(length))
    }

    /// Whether `derSignature` is a valid ECDSA signature over SHA-256(`message`).
    func verifySHA256(derSignature: [UInt8], message: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            OpenSSLErrorStack.clear()
        }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return false }
        let result = derSignature.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { input in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, input.baseAddress, input.count)
            }
        }
        return result == 1
    }
}
