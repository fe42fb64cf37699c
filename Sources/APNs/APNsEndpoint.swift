/// Where pushes go: Apple's production or sandbox (development) service, or any APNs-compatible server such as
/// the mock.
package struct APNsEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Host name to connect to, used for SNI, certificate verification and `:authority`.
    package let host: String
    /// TCP port. Default: 443 (Apple also listens on 2197).
    package let port: Int
    /// A PEM CA bundle to trust instead of the system store (e.g. the mock's self-signed certificate).
    /// Default: nil (system trust store, which must hold "USERTrust RSA Certification Authority" for Apple).
    let caFile: String?

    init(host: String, port: Int = 443, caFile: String? = nil) {
        self.host = host
        self.port = port
        self.caFile = caFile
    }

    /// `api.push.apple.com:443`: tokens from TestFlight, Ad Hoc and App Store builds.
    package static let production = Self(host: "api.push.apple.com")
    /// `api.sandbox.push.apple.com:443`: tokens from development builds run from Xcode.
    package static let sandbox = Self(host: "api.sandbox.push.apple.com")

    /// Any APNs-compatible server.
    package static func custom(host: String, port: Int, caFile: String? = nil) -> Self {
        Self(host: host, port: port, caFile: caFile)
    }

    /// Whether this is Apple's production host.
    var isProduction: Bool { host == Self.production.host }
    /// Whether this is Apple's sandbox host (or its legacy alias `api.development.push.apple.com`).
    var isSandbox: Bool { host == Self.sandbox.host || host == "api.development.push.apple.com" }

    /// The `:authority` pseudo-header: the host, with `:port` unless it is 443.
    var authority: String { port == 443 ? host : "\(host):\(port)" }

    package var description: String { "\(host):\(port)" }
}
