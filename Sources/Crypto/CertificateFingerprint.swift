internal import COpenSSL

/// The SHA-256 fingerprint of an X.509 certificate: the digest of its DER encoding, as 64 lowercase hex digits
/// (what `openssl x509 -noout -fingerprint -sha256` prints, without the colons and in lowercase). It names one
/// certificate exactly, so the mock APNs server registers certificate apps by it and the TLS layer reports the
/// client certificate a connection presented as one.
package struct CertificateFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// 64 lowercase hex digits.
    package let sha256: String

    /// The fingerprint of the first certificate of `pem` (the leaf, in a client certificate file).
    /// - Throws: ``CryptoError/Code/invalidPEM`` when there is no certificate OpenSSL can parse.
    package init(pem: String) throws(CryptoError) {
        self = try PEMCertificate.withFirst(in: pem) { certificate throws(CryptoError) in
            try CertificateFingerprint(certificate: certificate)
        }
    }

    /// The fingerprint of an OpenSSL `X509` the caller owns (for example `SSL_get0_peer_certificate`'s).
    /// - Warning: `certificate` must be a valid `X509 *` for the duration of the call; it is not retained.
    /// - Throws: ``CryptoError/Code/invalidPEM`` when OpenSSL cannot digest it.
    package init(certificate: OpaquePointer) throws(CryptoError) {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1, length == 32 else {
            throw .openSSL(.invalidPEM, "X509_digest failed")
        }
        sha256 = Self.hex(digest.prefix(Int(length)))
    }

    package var description: String { sha256 }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
