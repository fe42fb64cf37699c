/// Settings of the `/metrics`, `/healthz`, `/readyz` HTTP/1.1 server.
package struct TelemetryServerConfiguration: Sendable {
    /// Address to bind. Default: `0.0.0.0` (every interface, as a scraped container needs).
    package var host: String = "0.0.0.0"
    /// Port to bind; 0 picks a free one. Default: 9464.
    package var port: Int = 9464
    /// Largest request head (request line + headers) accepted; larger gets 431. Default: 8192 bytes.
    var maximumRequestBytes: Int = 8192
    /// A client that has not sent a full request head within this time gets 408 and is closed,
    /// so slow clients cannot hold the server. Default: 5 s.
    package var requestTimeout: Duration = .seconds(5)
    /// Connections held at once. A new connection beyond it evicts the oldest one still waiting for its request
    /// (idle or half-sent; if none, the oldest being answered), so held-open connections cannot starve probes.
    /// Default: 64.
    var maximumConnections: Int = 64

    package init() {}
}
