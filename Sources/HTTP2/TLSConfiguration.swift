/// TLS settings for an HTTP/2 client connection.
public struct TLSClientConfiguration: Sendable {
    /// PEM file of CA certificates to trust instead of the system store.
    /// Default: `nil` (the system trust store, `SSL_CTX_set_default_verify_paths`).
    public var caFile: String?
    /// PEM certificate chain presented to the server (certificate-based APNs auth).
    /// Default: `nil` (no client certificate).
    public var certificateFile: String?
    /// PEM private key for `certificateFile`.
    /// Default: `nil`.
    public var privateKeyFile: String?
    /// Verify the server certificate chain and host name.
    /// Default: `true`. Turn off only in tests.
    public var verifyPeer: Bool
    /// The name sent as SNI and checked against the certificate; `nil` means the host passed to `connect`.
    /// Default: `nil`.
    public var serverName: String?

    public init(
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

/// TLS settings for an HTTP/2 server.
public struct TLSServerConfiguration: Sendable {
    /// PEM certificate chain of the server.
    public var certificateFile: String
    /// PEM private key of the server.
    public var privateKeyFile: String
    /// ALPN protocols the server will select, in preference order.
    /// Default: `["h2"]`. Tests set `["http/1.1"]` to simulate a server without HTTP/2.
    public var alpnProtocols: [String]
    /// PEM CA file used to verify client certificates; when set, clients must present one.
    /// Default: `nil` (client certificates are not requested).
    public var clientCAFile: String?

    public init(
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
