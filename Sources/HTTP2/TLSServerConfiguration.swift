/// TLS settings for an HTTP/2 server.
public struct TLSServerConfiguration: Sendable {
    /// PEM certificate chain of the server.
    public var certificateFile: String
    /// PEM private key of the server.
    public var privateKeyFile: String
    /// ALPN protocols the server will select, in preference order.
    /// Default: `["h2"]`. Tests set `["http/1.1"]` to simulate a server without HTTP/2.
    var alpnProtocols: [String]
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
