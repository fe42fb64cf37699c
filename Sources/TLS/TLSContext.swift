internal import Crypto
@preconcurrency import Glibc
internal import COpenSSL

/// A loaded OpenSSL context (`SSL_CTX`): certificates, keys, trust store and ALPN. Build one per configuration and
/// share it between connections; loading the system trust store is expensive.
///
/// - Important: `@unchecked Sendable` because it wraps an `SSL_CTX` pointer that is fully configured in `init` and
///   only read afterwards (`SSL_new` is thread-safe on a configured context). It owns the pointer and frees it once,
///   in `deinit`.
package final class TLSContext: @unchecked Sendable {
    /// Client or server.
    enum Role: Sendable { case client, server }

    let role: Role
    let context: OpaquePointer
    /// Wire-format ALPN list the server selects from (length-prefixed), kept alive for the select callback.
    let serverProtocols: [[UInt8]]
    /// Client side: the server's certificate is verified. Server side: client certificates are requested and
    /// verified (a client CA is configured).
    let verifyPeer: Bool
    /// SNI / verification name override.
    let serverName: String?

    /// Loads a client context: TLS 1.2+, ALPN `h2`, trust store, optional client certificate.
    /// - Throws: `TLSError` (`configuration`) with the OpenSSL error stack.
    package init(client configuration: TLSClientConfiguration) throws(TLSError) {
        role = .client
        serverProtocols = []
        verifyPeer = configuration.verifyPeer
        serverName = configuration.serverName
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TLSError(.configuration, reason: "SSL_CTX_new: \(OpenSSLErrorStack.drainedDescription())")
        }
        self.context = context
        try Self.applyCommon(context)
        if configuration.verifyPeer {
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
        if let caFile = configuration.caFile {
            if SSL_CTX_load_verify_locations(context, caFile, nil) != 1 { throw Self.caFileError(caFile) }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw TLSError(.configuration, reason: "system trust store: \(OpenSSLErrorStack.drainedDescription())")
        }
        if let certificateFile = configuration.certificateFile {
            try Self.loadCertificate(context, certificateFile, configuration.privateKeyFile ?? certificateFile)
        } else if let identity = configuration.clientIdentityPEM {
            try Self.loadIdentity(context, certificateChain: identity.certificateChain, privateKey: identity.privateKey)
        }
        let alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        if SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) != 0 {  // 0 is success here
            throw TLSError(.configuration, reason: "SSL_CTX_set_alpn_protos: \(OpenSSLErrorStack.drainedDescription())")
        }
    }

    /// Why `path` could not serve as a CA file, in words an operator can act on (OpenSSL's queue appended).
    private static func caFileError(_ path: String) -> TLSError {
        let openSSL = OpenSSLErrorStack.drainedDescription()
        let problem = access(path, R_OK) == 0
            ? "holds no PEM certificate; give the PEM certificate of the CA that signed the server's"
            : "cannot be read (\(String(cString: strerror(errno))))"
        return TLSError(.configuration, reason: "CA file \(path) \(problem) [openssl: \(openSSL)]")
    }

    /// Loads a server context: certificate + key, TLS 1.2+, ALPN selection from `alpnProtocols`, and with a client
    /// CA file, client certificates requested and verified (required, or optional).
    /// - Throws: `TLSError` (`configuration`) with the OpenSSL error stack.
    package init(server configuration: TLSServerConfiguration) throws(TLSError) {
        role = .server
        verifyPeer = configuration.clientCAFile != nil
        serverName = nil
        serverProtocols = configuration.alpnProtocols.map { Array($0.utf8) }
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError(.configuration, reason: "SSL_CTX_new: \(OpenSSLErrorStack.drainedDescription())")
        }
        self.context = context
        try Self.applyCommon(context)
        try Self.loadCertificate(context, configuration.certificateFile, configuration.privateKeyFile)
        if let clientCAFile = configuration.clientCAFile {
            if SSL_CTX_load_verify_locations(context, clientCAFile, nil) != 1 { throw Self.caFileError(clientCAFile) }
            // Without FAIL_IF_NO_PEER_CERT a client may present no certificate; one it presents must still verify.
            let mode = configuration.clientCertificateOptional
                ? SSL_VERIFY_PEER : SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
            SSL_CTX_set_verify(context, mode, nil)
            // A client resuming a session (ticket or id) would otherwise fail the handshake: OpenSSL refuses to resume
            // a session that may carry a verified client certificate without a session id context.
            let sessionContext = Array("callpush".utf8)
            if SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count)) != 1 {
                throw TLSError(.configuration, reason: "session id context: \(OpenSSLErrorStack.drainedDescription())")
            }
        }
        SSL_CTX_set_alpn_select_cb(context, tlsALPNSelectCallback, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        SSL_CTX_free(context)
    }

    private static func applyCommon(_ context: OpaquePointer) throws(TLSError) {
        if COpenSSL_SSL_CTX_set_min_proto_version(context, COpenSSL_TLS1_2_VERSION()) != 1 {
            throw TLSError(.configuration, reason: "min protocol version: \(OpenSSLErrorStack.drainedDescription())")
        }
        SSL_CTX_set_options(context, COpenSSL_SSL_OP_NO_COMPRESSION() | COpenSSL_SSL_OP_NO_RENEGOTIATION())
        _ = COpenSSL_SSL_CTX_set_mode(
            context,
            COpenSSL_SSL_MODE_ENABLE_PARTIAL_WRITE() | COpenSSL_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER()
        )
    }

    private static func loadCertificate(_ context: OpaquePointer, _ certificate: String, _ key: String)
        throws(TLSError)
    {
        if SSL_CTX_use_certificate_chain_file(context, certificate) != 1 {
            throw TLSError(.configuration, reason: "certificate \(certificate): \(OpenSSLErrorStack.drainedDescription())")
        }
        if SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) != 1 {
            throw TLSError(.configuration, reason: "private key \(key): \(OpenSSLErrorStack.drainedDescription())")
        }
        if SSL_CTX_check_private_key(context) != 1 {
            throw TLSError(.configuration, reason: "key does not match certificate: \(OpenSSLErrorStack.drainedDescription())")
        }
    }
}

extension TLSContext {
    /// Uses a certificate chain (the certificate first) and its key given as PEM text, never written to a file.
    fileprivate static func loadIdentity(_ context: OpaquePointer, certificateChain: String, privateKey: String)
        throws(TLSError)
    {
        func failure(_ what: String) -> TLSError {
            TLSError(.configuration, reason: "client \(what): \(OpenSSLErrorStack.drainedDescription())")
        }
        let chain = Array(certificateChain.utf8)
        guard let certificates = chain.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw failure("certificate")
        }
        defer { BIO_free(certificates) }
        guard let leaf = PEM_read_bio_X509(certificates, nil, nil, nil) else { throw failure("certificate") }
        defer { X509_free(leaf) }
        guard SSL_CTX_use_certificate(context, leaf) == 1 else { throw failure("certificate") }
        while let extra = PEM_read_bio_X509(certificates, nil, nil, nil) {
            defer { X509_free(extra) }
            guard COpenSSL_SSL_CTX_add1_chain_cert(context, extra) == 1 else { throw failure("certificate chain") }
        }
        OpenSSLErrorStack.clear()  // the read past the last certificate leaves "no start line"
        let keyText = Array(privateKey.utf8)
        guard let keyBIO = keyText.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw failure("private key")
        }
        defer { BIO_free(keyBIO) }
        guard let key = PEM_read_bio_PrivateKey(keyBIO, nil, nil, nil) else { throw failure("private key") }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1 else { throw failure("private key") }
        guard SSL_CTX_check_private_key(context) == 1 else { throw failure("key does not match its certificate") }
    }
}

/// ALPN selection for servers: the first protocol in the client's list that the server supports.
/// No match: no ALPN is negotiated (NOACK) and the client decides (ours fails with `alpnMismatch`).
private func tlsALPNSelectCallback(
    _ ssl: OpaquePointer?,
    _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ outLength: UnsafeMutablePointer<UInt8>?,
    _ input: UnsafePointer<UInt8>?,
    _ inputLength: UInt32,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let argument, let input, let out, let outLength else { return COpenSSL_SSL_TLSEXT_ERR_NOACK() }
    let context = Unmanaged<TLSContext>.fromOpaque(argument).takeUnretainedValue()
    for wanted in context.serverProtocols {
        var index = 0
        let total = Int(inputLength)
        while index < total {
            let length = Int(input[index])
            let start = index + 1
            if start + length > total { break }
            if length == wanted.count {
                var same = true
                for k in 0..<length where input[start + k] != wanted[k] {
                    same = false
                    break
                }
                if same {
                    out.pointee = input + start
                    outLength.pointee = UInt8(length)
                    return COpenSSL_SSL_TLSEXT_ERR_OK()
                }
            }
            index = start + length
        }
    }
    return COpenSSL_SSL_TLSEXT_ERR_NOACK()
}
