internal import COpenSSL

/// Owns one memory `BIO`: a read-only view of bytes, or a growable write buffer. Freed once in `deinit`.
final class OpenSSLMemoryBIO {
    let pointer: OpaquePointer
    /// Keeps the bytes a read-only BIO points at alive for its lifetime.
    private let backing: UnsafeMutableRawBufferPointer?

    /// An empty BIO to write into.
    init() throws(CryptoError) {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL(.invalidPEM, "BIO_new failed") }
        self.pointer = bio
        self.backing = nil
    }

    /// A BIO reading `bytes` (copied, so the BIO never points at Swift-managed memory).
    init(reading bytes: [UInt8]) throws(CryptoError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        buffer.copyBytes(from: bytes)
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(bytes.count)) else {
            buffer.deallocate()
            throw .openSSL(.invalidPEM, "BIO_new_mem_buf failed")
        }
        self.pointer = bio
        self.backing = buffer
    }

    deinit {
        BIO_free(pointer)
        backing?.deallocate()
    }

    /// Everything written so far.
    func contents() -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = COpenSSL_BIO_get_mem_data(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    func string() -> String { String(decoding: contents(), as: UTF8.self) }
}
