internal import COpenSSL

/// Converts ECDSA signatures between OpenSSL's DER and JWS' raw fixed-width r‖s.
enum ECDSASignatureEncoding {
    /// DER `ECDSA-Sig-Value` → r‖s, each left-padded to `width` bytes.
    static func raw(fromDER der: [UInt8], width: Int = 32) throws(CryptoError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature = parsed else { throw .openSSL(.signingFailed, "d2i_ECDSA_SIG failed") }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        guard let r, let s else { throw .openSSL(.signingFailed, "ECDSA_SIG_get0 returned no r/s") }
        var output = [UInt8](repeating: 0, count: 2 * width)
        let written = output.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(r, base, Int32(width)) == Int32(width)
                && BN_bn2binpad(s, base + width, Int32(width)) == Int32(width)
        }
        guard written else { throw .openSSL(.signingFailed, "BN_bn2binpad: r or s wider than \(width) bytes") }
        return output
    }

    /// r‖s (two equal halves) → DER `ECDSA-Sig-Value`.
    static func der(fromRaw raw: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard raw.count == 64 else { throw CryptoError(.invalidSignature, "raw signature is \(raw.count) bytes, not 64") }
        guard let signature = ECDSA_SIG_new() else { throw .openSSL(.invalidSignature, "ECDSA_SIG_new failed") }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            throw .openSSL(.invalidSignature, "BN_bin2bn failed")
        }
        // On success ECDSA_SIG_set0 takes ownership of r and s.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            throw .openSSL(.invalidSignature, "ECDSA_SIG_set0 failed")
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { throw .openSSL(.invalidSignature, "i2d_ECDSA_SIG failed") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        guard written == length else { throw .openSSL(.invalidSignature, "i2d_ECDSA_SIG wrote \(written) bytes") }
        return der
    }
}
