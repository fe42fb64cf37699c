package import Telemetry
import Synchronization

/// The router's Prometheus series: per app (label `bundle_id`, bounded by the configured apps; `any` for the app
/// that serves every bundle id) and per credential (label `credential`: the key id, or `certificate:<bundle id>`).
///
/// - `callpush_apns_app_requests_total{bundle_id,disposition}`: answers per app (`delivered`, `tokenInvalid`,
///   `retryLater`, `fixCredentials`, `permanent`).
/// - `callpush_apns_app_requests_in_flight{bundle_id}`: pushes sent and not answered yet.
/// - `callpush_apns_app_in_flight_limited_total{bundle_id}`: pushes answered `AppInFlightLimit` at once because
///   their credential had its bound in flight.
/// - `callpush_apns_unknown_app_requests_total`: pushes for a bundle id no app serves.
/// - `callpush_apns_credential_loaded_timestamp_seconds{credential}`: when the credential's files were last read.
/// - `callpush_apns_certificate_expiry_timestamp_seconds{credential}`: each certificate credential's `notAfter`.
/// - `callpush_apns_config_reloads_total{result}`: apps configurations applied (`ok`) or refused (`failed`).
///
/// A credential's series (these and its client's `callpush_apns_*{credential}` ones) are removed once a reload has
/// removed the credential and its last client is gone.
package final class APNsAppRouterMetrics: Sendable {
    static let appRequests = "callpush_apns_app_requests_total"
    static let appInFlight = "callpush_apns_app_requests_in_flight"
    static let appInFlightLimited = "callpush_apns_app_in_flight_limited_total"
    static let unknownAppRequests = "callpush_apns_unknown_app_requests_total"
    static let credentialLoaded = "callpush_apns_credential_loaded_timestamp_seconds"
    static let certificateExpiry = "callpush_apns_certificate_expiry_timestamp_seconds"
    static let configReloads = "callpush_apns_config_reloads_total"

    /// One app's series, looked up once per configuration.
    final class App: Sendable {
        let inFlight: Gauge
        let limited: Counter
        private let answers: CaseCounters<APNsDisposition>

        init(registry: MetricsRegistry, bundleID: String) {
            inFlight = registry.gauge(
                APNsAppRouterMetrics.appInFlight, help: "APNs pushes in flight per app.", labels: ["bundle_id": bundleID])
            limited = registry.counter(
                APNsAppRouterMetrics.appInFlightLimited,
                help: "Pushes answered AppInFlightLimit (retry later) because their credential had its bound in flight.",
                labels: ["bundle_id": bundleID])
            answers = CaseCounters { disposition in
                registry.counter(
                    APNsAppRouterMetrics.appRequests, help: "APNs answers per app, by disposition.",
                    labels: ["bundle_id": bundleID, "disposition": disposition.rawValue])
            }
        }

        func record(_ result: APNsResult) { answers[result.disposition].increment() }
    }

    package let registry: MetricsRegistry
    let unknownApp: Counter
    private let apps = Mutex<[String: App]>([:])
    /// Clients (in force or retiring) per credential label: a reload may make a new client of a label whose old
    /// client is still answering, and the two share the label's series.
    private let credentialClients = Mutex<[String: Int]>([:])

    init(registry: MetricsRegistry) {
        self.registry = registry
        unknownApp = registry.counter(Self.unknownAppRequests, help: "APNs pushes for a bundle id no configured app serves.")
        for result in ["ok", "failed"] { reloadCounter(result) }
    }

    func app(_ bundleID: String) -> App {
        apps.withLock { apps in
            if let app = apps[bundleID] { return app }
            let app = App(registry: registry, bundleID: bundleID)
            apps[bundleID] = app
            return app
        }
    }

    func credentialLoaded(_ label: String, atSecondsSinceEpoch seconds: Double) {
        registry.gauge(Self.credentialLoaded, help: "When each APNs credential's files were last read (UNIX seconds).",
                       labels: ["credential": label]).set(seconds)
    }

    func certificateExpires(_ label: String, atSecondsSinceEpoch seconds: Int64) {
        registry.gauge(Self.certificateExpiry, help: "When each APNs client certificate expires (notAfter, UNIX seconds).",
                       labels: ["credential": label]).set(Double(seconds))
    }

    /// Removes the series of a credential no longer configured (so no alert fires for a certificate not in use).
    func forgetCredential(_ label: String) {
        for name in [Self.credentialLoaded, Self.certificateExpiry] { registry.remove(name, labels: ["credential": label]) }
    }

    /// A client labelled `credential` is about to be made: the label's series stay until every such client is
    /// released.
    func retainCredential(_ label: String) {
        credentialClients.withLock { $0[label, default: 0] += 1 }
    }

    /// A client labelled `credential` is gone (shut down after a reload, or never made because loading failed).
    /// When no other client carries the label, every series labelled with it (the client's `callpush_apns_*`
    /// series and the credential's own) is removed, and `client`'s late updates are kept out
    /// (``APNsClientMetrics/retire()``), so a credential a reload removed leaves nothing behind in `/metrics`.
    func releaseCredential(_ label: String, client: APNsClientMetrics?) {
        credentialClients.withLock { counts in
            let left = counts[label, default: 1] - 1
            guard left <= 0 else {
                counts[label] = left
                return
            }
            counts[label] = nil
            client?.retire()
            registry.removeSeries(labelled: ["credential": label])
        }
    }

    /// `callpush_apns_config_reloads_total{result}`: `ok` or `failed`.
    @discardableResult
    package func reloadCounter(_ result: String) -> Counter {
        registry.counter(Self.configReloads, help: "APNs apps configurations applied (ok) or refused (failed).",
                         labels: ["result": result])
    }

    /// The answers counted so far for one app and disposition.
    func answerCount(bundleID: String, disposition: APNsDisposition) -> Double {
        registry.counter(Self.appRequests, help: "APNs answers per app, by disposition.",
                         labels: ["bundle_id": bundleID, "disposition": disposition.rawValue]).value
    }
}
