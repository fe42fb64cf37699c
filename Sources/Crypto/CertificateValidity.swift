internal import COpenSSL
internal import Glibc

/// When an X.509 certificate stops being valid: its `notAfter`, read with OpenSSL from the first certificate of a
/// PEM text (the leaf, in a client certificate file). How `callpush run` shows each certificate credential's
/// expiry (`callpush_apns_certificate_expiry_timestamp_seconds`).
package struct CertificateValidity: Sendable, Hashable {
    /// `notAfter` in seconds since the UNIX epoch (UTC).
    package let notAfter: Int64

    /// Reads the first certificate of `pem`.
    /// - Throws: ``CryptoError/Code/invalidPEM`` when there is no certificate OpenSSL can parse, or its `notAfter`
    ///   is not a valid time.
    package init(pem: String) throws(CryptoError) {
        notAfter = try PEMCertificate.withFirst(in: pem) { certificate throws(CryptoError) -> Int64 in
            // Owned by `certificate`: not freed here.
            guard let time = X509_get0_notAfter(certificate) else {
                throw .openSSL(.invalidPEM, "the certificate has no notAfter")
            }
            var fields = tm()
            guard ASN1_TIME_to_tm(time, &fields) == 1 else {
                throw .openSSL(.invalidPEM, "the certificate's notAfter is not a valid time")
            }
            return Int64(timegm(&fields))
        }
    }
}
