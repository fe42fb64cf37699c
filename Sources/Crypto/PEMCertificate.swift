internal import COpenSSL

/// The first certificate of a PEM text (the leaf, in a client certificate file), parsed by OpenSSL for the length
/// of one call.
enum PEMCertificate {
    /// Parses the first certificate of `pem` and passes it to `body`; the `X509` is freed when `body` returns.
    /// - Throws: ``CryptoError/Code/invalidPEM`` when there is no certificate OpenSSL can parse, or what `body` throws.
    static func withFirst<Result>(
        in pem: String,
        _ body: (OpaquePointer) throws(CryptoError) -> Result
    ) throws(CryptoError) -> Result {
        OpenSSLErrorStack.clear()
        let bio = try OpenSSLMemoryBIO(reading: Array(pem.utf8))
        guard let certificate = PEM_read_bio_X509(bio.pointer, nil, nil, nil) else {
            throw .openSSL(.invalidPEM, "no PEM certificate")
        }
        defer { X509_free(certificate) }
        return try body(certificate)
    }
}
