/// TLS settings for an HTTP/2 server.
package struct TLSServerConfiguration: Sendable {
    /// PEM certificate chain of the server.
    package var certificateFile: String
    /// PEM private key of the server.
    package var privateKeyFile: String
    /// ALPN protocols the server will select, in preference order.
    /// Default: `["h2"]`. Tests set `["http/1.1"]` to simulate a server without HTTP/2.
    var alpnProtocols: [String]
    /// PEM CA file used to verify client certificates; when set, clients must present one that verifies against
    /// it (unless ``clientCertificateOptional``).
    /// Default: `nil` (client certificates are not requested).
    package var clientCAFile: String?
    /// With ``clientCAFile``: a client certificate is requested and, when the client presents one, it must verify
    /// against the CA or the handshake fails; a client that presents none still connects (it authenticates some
    /// other way, e.g. with an APNs provider token). `SSL_VERIFY_PEER` without `SSL_VERIFY_FAIL_IF_NO_PEER_CERT`.
    /// The certificate a connection presented is ``TLSTransport/verifiedClientCertificate``.
    /// Ignored without ``clientCAFile`` (no certificate is requested).
    /// Default: `false` (with ``clientCAFile``, every client must present a certificate).
    package var clientCertificateOptional = false

    package init(
        certificateFile: String,
        privateKeyFile: String,
        alpnProtocols: [String] = ["h2"],
        clientCAFile: String? = nil
    ) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.alpnProtocols = alpnProtocols
        self.clientCAFile = clientCAFile
    }
}
