/// TLS settings for an HTTP/2 client connection.
package struct TLSClientConfiguration: Sendable {
    /// PEM file of CA certificates to trust instead of the system store.
    /// Default: `nil` (the system trust store, `SSL_CTX_set_default_verify_paths`).
    var caFile: String?
    /// PEM certificate chain presented to the server (certificate-based APNs auth).
    /// Default: `nil` (no client certificate).
    package var certificateFile: String?
    /// PEM private key for `certificateFile`.
    /// Default: `nil`.
    package var privateKeyFile: String?
    /// A client certificate chain and its private key as PEM text, instead of files: a key decrypted from a PKCS12
    /// archive stays in memory. Default: `nil`.
    package var clientIdentityPEM: (certificateChain: String, privateKey: String)?
    /// Verify the server certificate chain and host name.
    /// Default: `true`. Turn off only in tests.
    var verifyPeer: Bool
    /// The name sent as SNI and checked against the certificate; `nil` means the host passed to `connect`.
    /// Default: `nil`.
    var serverName: String?

    package init(
        caFile: String? = nil,
        certificateFile: String? = nil,
        privateKeyFile: String? = nil,
        verifyPeer: Bool = true,
        serverName: String? = nil
    ) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.verifyPeer = verifyPeer
        self.serverName = serverName
    }
}

