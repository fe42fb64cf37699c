internal import COpenSSL

/// A new P-256 key and a self-signed X.509 certificate for it, for TLS servers in tests, the demo and the mock
/// APNs server. Clients trust it by loading ``certificatePEM`` as their CA file.
///
/// The certificate is v3, SHA-256-signed, with `basicConstraints=critical,CA:TRUE` (so it can serve as its own
/// trust anchor), `keyUsage=digitalSignature,keyCertSign`, `extendedKeyUsage=serverAuth,clientAuth`, a subject
/// key identifier and a `subjectAltName` with every DNS name and IP address given.
package struct SelfSignedCertificate: Sendable {
    /// The certificate, PEM.
    package let certificatePEM: String
    /// The private key, PKCS#8 PEM.
    package let privateKeyPEM: String
    /// The private key itself.
    let privateKey: ES256PrivateKey

    /// Paths written by ``write(toDirectory:certificateFileName:privateKeyFileName:)``.
    package struct Files: Sendable, Hashable {
        package let certificatePath: String
        package let privateKeyPath: String
    }

    /// Generates a key and certificate.
    /// - Parameters:
    ///   - commonName: the subject and issuer CN. Default: `localhost`.
    ///   - dnsNames: DNS subjectAltNames. Default: `["localhost"]`.
    ///   - ipAddresses: IP subjectAltNames (IPv4 or IPv6 text). Default: `["127.0.0.1", "::1"]`.
    ///   - validityDays: days from now until notAfter; notBefore is one hour ago to absorb clock skew. Default: 365.
    /// - Throws: ``CryptoError/Code/certificateGenerationFailed`` with OpenSSL's errors.
    package static func generate(
        commonName: String = "localhost",
        dnsNames: [String] = ["localhost"],
        ipAddresses: [String] = ["127.0.0.1", "::1"],
        validityDays: Int = 365
    ) throws(CryptoError) -> SelfSignedCertificate {
        let key = try OpenSSLKey.generateP256()
        OpenSSLErrorStack.clear()
        guard let certificate = X509_new() else { throw .openSSL(.certificateGenerationFailed, "X509_new failed") }
        defer { X509_free(certificate) }

        guard X509_set_version(certificate, 2) == 1 else {
            throw .openSSL(.certificateGenerationFailed, "X509_set_version failed")
        }
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else {
            throw .openSSL(.certificateGenerationFailed, "RAND_bytes failed")
        }
        serial[0] &= 0x7F  // positive
        serial[0] |= 0x01  // non-zero
        guard let serialNumber = BN_bin2bn(serial, Int32(serial.count), nil) else {
            throw .openSSL(.certificateGenerationFailed, "BN_bin2bn failed")
        }
        defer { BN_free(serialNumber) }
        guard BN_to_ASN1_INTEGER(serialNumber, X509_get_serialNumber(certificate)) != nil else {
            throw .openSSL(.certificateGenerationFailed, "BN_to_ASN1_INTEGER failed")
        }
        guard X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil,
            X509_gmtime_adj(X509_getm_notAfter(certificate), Int(validityDays) * 86_400) != nil
        else { throw .openSSL(.certificateGenerationFailed, "X509_gmtime_adj failed") }
        guard X509_set_pubkey(certificate, key.pointer) == 1 else {
            throw .openSSL(.certificateGenerationFailed, "X509_set_pubkey failed")
        }
        guard let name = X509_get_subject_name(certificate) else {
            throw .openSSL(.certificateGenerationFailed, "X509_get_subject_name failed")
        }
        let cn = Array(commonName.utf8)
        let added = cn.withUnsafeBufferPointer {
            X509_NAME_add_entry_by_txt(name, "CN", COpenSSL_MBSTRING_ASC(), $0.baseAddress, Int32($0.count), -1, 0)
        }
        guard added == 1, X509_set_issuer_name(certificate, name) == 1 else {
            throw .openSSL(.certificateGenerationFailed, "cannot set subject/issuer CN=\(commonName)")
        }

        var extensions: [(Int32, String)] = [
            (NID_basic_constraints, "critical,CA:TRUE"),
            (NID_key_usage, "critical,digitalSignature,keyCertSign"),
            (NID_ext_key_usage, "serverAuth,clientAuth"),
            (NID_subject_key_identifier, "hash"),
        ]
        let alternativeNames = dnsNames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }
        if !alternativeNames.isEmpty {
            extensions.append((NID_subject_alt_name, alternativeNames.joined(separator: ",")))
        }
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, certificate, certificate, nil, nil, 0)
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw .openSSL(.certificateGenerationFailed, "bad certificate extension \(value)")
            }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else {
                throw .openSSL(.certificateGenerationFailed, "X509_add_ext failed for \(value)")
            }
        }
        guard X509_sign(certificate, key.pointer, EVP_sha256()) > 0 else {
            throw .openSSL(.certificateGenerationFailed, "X509_sign failed")
        }

        let bio = try OpenSSLMemoryBIO()
        guard PEM_write_bio_X509(bio.pointer, certificate) == 1 else {
            throw .openSSL(.certificateGenerationFailed, "PEM_write_bio_X509 failed")
        }
        let privateKey = ES256PrivateKey(uncheckedKey: key)
        return SelfSignedCertificate(
            certificatePEM: bio.string(),
            privateKeyPEM: try key.privateKeyPEM(),
            privateKey: privateKey
        )
    }

    /// Writes the certificate (mode 0644) and the key (mode 0600) into `directory`, which must exist.
    /// - Returns: the two paths.
    /// - Throws: ``CryptoError/Code/fileUnwritable``.
    @discardableResult
    package func write(
        toDirectory directory: String,
        certificateFileName: String = "cert.pem",
        privateKeyFileName: String = "key.pem"
    ) throws(CryptoError) -> Files {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        let files = Files(certificatePath: base + certificateFileName, privateKeyPath: base + privateKeyFileName)
        try FileBytes.write(Array(certificatePEM.utf8), to: files.certificatePath, permissions: 0o644)
        try FileBytes.write(Array(privateKeyPEM.utf8), to: files.privateKeyPath, permissions: 0o600)
        return files
    }
}
