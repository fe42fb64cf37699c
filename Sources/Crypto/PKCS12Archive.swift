internal import COpenSSL

/// Converts a PKCS12 (`.p12`) archive, as exported from Keychain Access for certificate-based APNs
/// authentication, into PEM text a TLS layer can load. Nothing is written to disk.
package enum PKCS12Archive {
    /// The contents of an archive as PEM.
    package struct Contents: Sendable, Hashable {
        /// The leaf (client) certificate.
        package let certificatePEM: String
        /// Its private key, unencrypted PKCS#8 PEM (RSA or EC, whatever the archive holds).
        package let privateKeyPEM: String
        /// Any further certificates in the archive (intermediates), concatenated PEM; empty when none.
        package let chainPEM: String
    }

    /// Parses the `.p12` at `path`.
    /// - Throws: ``CryptoError/Code/fileUnreadable`` or the errors of ``contents(of:password:)``.
    /// OpenSSL 3's `legacy` provider, and the `default` one beside it (loading any provider stops the default from
    /// loading on its own); loaded once, at the first archive that needs it. False when it is not installed.
    private static let legacyProviderLoaded: Bool = {
        _ = OSSL_PROVIDER_load(nil, "default")
        return OSSL_PROVIDER_load(nil, "legacy") != nil
    }()

    package static func contents(ofFile path: String, password: String) throws(CryptoError) -> Contents {
        try contents(of: FileBytes.read(path), password: password)
    }

    /// Parses DER PKCS12 bytes with `password` (use `""` for none).
    /// - Throws: ``CryptoError/Code/invalidPKCS12`` when the data is corrupt, the password is wrong, or it holds no
    ///   certificate or no key.
    package static func contents(of der: [UInt8], password: String) throws(CryptoError) -> Contents {
        OpenSSLErrorStack.clear()
        let bio = try OpenSSLMemoryBIO(reading: der)
        guard let archive = d2i_PKCS12_bio(bio.pointer, nil) else {
            throw .openSSL(.invalidPKCS12, "not a PKCS12 archive")
        }
        defer { PKCS12_free(archive) }
        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var chain: OpaquePointer?
        // Archives exported by OpenSSL 1.1 or macOS encrypt with RC2-40 or 3DES, which OpenSSL 3 keeps in its legacy
        // provider: loaded (with the default one) only when an archive needs it.
        if PKCS12_parse(archive, password, &key, &certificate, &chain) != 1 {
            guard Self.legacyProviderLoaded, PKCS12_parse(archive, password, &key, &certificate, &chain) == 1 else {
                throw .openSSL(.invalidPKCS12, "PKCS12_parse failed (wrong password?)")
            }
            OpenSSLErrorStack.clear()
        }
        let ownedKey = key.map { OpenSSLKey(taking: $0) }
        defer {
            if let certificate { X509_free(certificate) }
            if let chain { COpenSSL_sk_X509_pop_free(chain) }
        }
        guard let ownedKey else { throw CryptoError(.invalidPKCS12, "archive holds no private key") }
        guard let certificate else { throw CryptoError(.invalidPKCS12, "archive holds no certificate") }

        let certificateBIO = try OpenSSLMemoryBIO()
        guard PEM_write_bio_X509(certificateBIO.pointer, certificate) == 1 else {
            throw .openSSL(.invalidPKCS12, "PEM_write_bio_X509 failed")
        }
        let chainBIO = try OpenSSLMemoryBIO()
        if let chain {
            for index in 0..<COpenSSL_sk_X509_num(chain) {
                guard let extra = COpenSSL_sk_X509_value(chain, index),
                    PEM_write_bio_X509(chainBIO.pointer, extra) == 1
                else { throw .openSSL(.invalidPKCS12, "PEM_write_bio_X509 failed for the chain") }
            }
        }
        return Contents(
            certificatePEM: certificateBIO.string(),
            privateKeyPEM: try ownedKey.privateKeyPEM(),
            chainPEM: chainBIO.string()
        )
    }
}
