/// Settings of an ``APNsMockServer``: where it listens, its TLS identity, its APNs rules and its initial faults.
package struct APNsMockServerConfiguration: Sendable {
    /// Address to bind.
    /// Default: `"127.0.0.1"`.
    package var host: String
    /// Port to bind; 0 picks an ephemeral port (see ``APNsMockServer/port``).
    /// Default: 0.
    package var port: Int
    /// PEM certificate (chain) the server presents; nil generates a self-signed P-256 certificate for `localhost`,
    /// `127.0.0.1` and `::1` at start and writes it to ``certificateDirectory``.
    /// Default: nil.
    package var certificateFile: String?
    /// PEM private key for ``certificateFile``.
    /// Default: nil.
    package var privateKeyFile: String?
    /// Where a generated certificate and key are written (`cert.pem`, `key.pem`); nil makes a new temporary
    /// directory, removed by ``APNsMockServer/stop()``.
    /// Default: nil.
    var certificateDirectory: String?
    /// Certificate mode: PEM CA file that client certificates must chain to (a self-signed client certificate can be
    /// its own CA). When set, every client must present a certificate.
    /// Default: nil (no client certificates requested).
    package var clientCAFile: String?
    /// With ``clientCAFile``: a client certificate is requested and must verify when presented, but a client may
    /// connect without one and use token auth (``APNsMockConfiguration/clientCertificates`` for the ones that do).
    /// Default: `false` (every client must present a certificate).
    package var clientCertificateOptional = false
    /// APNs rules: authentication (provider token or certificate), topics, token ages, payload limit.
    /// Default: `APNsMockConfiguration()` (certificate mode, any topic).
    package var apns: APNsMockConfiguration
    /// Faults at start (change them later through ``APNsMockServer/faults``).
    /// Default: none.
    package var faults: APNsMockFaults
    /// Seed of the fault generator.
    /// Default: 0x5EED.
    package var seed: UInt64
    /// Requests the recorder keeps (counts cover all); 0 keeps only the counts.
    /// Default: 10_000.
    package var recorderCapacity: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS a token-auth connection starts with, until its first request with a valid
    /// provider token (APNs: 1).
    /// Default: 1.
    var unauthenticatedMaxConcurrentStreams: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS after the first valid token, and from the start in certificate mode.
    /// Default: 1000.
    package var maxConcurrentStreams: Int
    /// Event-loop threads when the server creates its own group.
    /// Default: 1.
    var eventLoops: Int

    package init(
        host: String = "127.0.0.1",
        port: Int = 0,
        certificateFile: String? = nil,
        privateKeyFile: String? = nil,
        certificateDirectory: String? = nil,
        clientCAFile: String? = nil,
        apns: APNsMockConfiguration = APNsMockConfiguration(),
        faults: APNsMockFaults = .none,
        seed: UInt64 = 0x5EED,
        recorderCapacity: Int = 10_000,
        unauthenticatedMaxConcurrentStreams: Int = 1,
        maxConcurrentStreams: Int = 1000,
        eventLoops: Int = 1
    ) {
        self.host = host
        self.port = port
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.certificateDirectory = certificateDirectory
        self.clientCAFile = clientCAFile
        self.apns = apns
        self.faults = faults
        self.seed = seed
        self.recorderCapacity = recorderCapacity
        self.unauthenticatedMaxConcurrentStreams = unauthenticatedMaxConcurrentStreams
        self.maxConcurrentStreams = maxConcurrentStreams
        self.eventLoops = eventLoops
    }

    /// True when the APNs rules use provider tokens (verified or not): connections then start at
    /// ``unauthenticatedMaxConcurrentStreams``.
    var usesProviderTokens: Bool {
        switch apns.authentication {
        case .providerToken, .unverifiedProviderToken: true
        case .certificate, .acceptAnyToken: false
        }
    }
}
