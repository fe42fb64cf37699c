package import Telemetry
import Synchronization

/// The APNs client's Prometheus series (names fixed; labels bounded: status, reason, endpoint, connection slot,
/// event kind).
///
/// - `callpush_apns_requests_total{status,reason}`: answers, `status="none"` for transport failures, `reason="other"`
///   for reasons APNs does not document.
/// - `callpush_apns_request_duration_seconds`: `send` to answer, resends included.
/// - `callpush_apns_connections{endpoint}`: open connections (ready or draining).
/// - `callpush_apns_streams_in_flight{endpoint}`: requests on the wire.
/// - `callpush_apns_stream_limit{endpoint,connection}`: the effective stream limit of each pool slot.
/// - `callpush_apns_jwt_refreshes_total`: provider tokens minted.
/// - `callpush_apns_connection_events_total{endpoint,event}`: `opened`, `goaway`, `failed`, `replaced`.
package final class APNsClientMetrics: Sendable {
    static let requestsTotal = "callpush_apns_requests_total"
    package static let requestDuration = "callpush_apns_request_duration_seconds"
    static let connections = "callpush_apns_connections"
    static let streamsInFlight = "callpush_apns_streams_in_flight"
    static let streamLimit = "callpush_apns_stream_limit"
    static let jwtRefreshes = "callpush_apns_jwt_refreshes_total"
    static let connectionEvents = "callpush_apns_connection_events_total"

    /// Connection event kinds.
    enum ConnectionEvent: String, Sendable, CaseIterable {
        case opened, goaway, failed, replaced
    }

    package let registry: MetricsRegistry
    /// Labels added to every series of this client, e.g. `credential` when several clients share a registry
    /// (``APNsAppRouter``). Default: none.
    let constantLabels: [String: String]
    let duration: Histogram
    let jwtRefreshCounter: Counter
    /// Answer counters by `status|reason`, and whether ``retire()`` took this client's series out of the registry
    /// (lookups then hand out handles the registry does not hold). Registry lookups happen under this lock, so a
    /// lookup racing ``retire()`` cannot put a series back.
    private let state: Mutex<State>
    /// `callpush_apns_requests_total{status="200",reason="Success"}`, the one most answers count in: registered at
    /// the start (a generic lazy reference cost about 640 instructions per answer, unspecialised across modules).
    private let successCounter: Counter

    private struct State {
        var requestCounters: [String: Counter] = [:]
        var retired = false
    }

    init(registry: MetricsRegistry, constantLabels: [String: String] = [:]) {
        self.registry = registry
        self.constantLabels = constantLabels
        duration = registry.histogram(
            Self.requestDuration, help: "Time from send to APNs' answer (seconds).", labels: constantLabels)
        jwtRefreshCounter = registry.counter(
            Self.jwtRefreshes, help: "APNs provider tokens (JWT) minted.", labels: constantLabels)
        successCounter = registry.counter(
            Self.requestsTotal, help: Self.requestsHelp,
            labels: ["status": "200", "reason": "Success"].merging(constantLabels) { own, _ in own })
        state = Mutex(State(requestCounters: [Self.successKey: successCounter]))
    }

    /// `labels` plus ``constantLabels``.
    private func labelled(_ labels: [String: String]) -> [String: String] {
        constantLabels.isEmpty ? labels : labels.merging(constantLabels) { own, _ in own }
    }

    func recordAnswer(_ result: APNsResult, seconds: Double) {
        // Most answers are a plain 200: its counter is looked up once, not built from a key per push.
        if result.status == 200 && result.reason == nil {
            successCounter.increment()
            duration.observe(seconds)
            return
        }
        let status = result.status.map(String.init) ?? "none"
        let reason = result.reason.map(Self.reasonLabel) ?? (result.status == 200 ? "Success" : "")
        requestCounter(key: status + "|" + reason, status: status, reason: reason).increment()
        duration.observe(seconds)
    }

    /// A reason as a label value: itself when APNs documents it or it is a transport reason of the client's own,
    /// else `other`, so that a server answering with reasons of its own (an APNs-compatible proxy, a new reason)
    /// cannot grow the series without bound. The result, the logs and the retry and dead-letter headers keep the
    /// reason as it came. (The app router's own reasons, `UnknownApp` and `AppInFlightLimit`, never reach the client.)
    static func reasonLabel(_ reason: String) -> String {
        APNsReason(reason).isKnown ? reason : "other"
    }

    /// ``successCounter``'s key among the answer counters.
    private static let successKey = "200|Success"
    private static let requestsHelp = "APNs answers by status and reason (status none: no answer)."

    /// The answer counter of `status`/`reason`, registered once per key (a fresh handle once ``retire()`` ran).
    private func requestCounter(key: String, status: String, reason: String) -> Counter {
        state.withLock { state -> Counter in
            if let counter = state.requestCounters[key] { return counter }
            let counter = state.retired ? Counter() : registry.counter(
                Self.requestsTotal, help: Self.requestsHelp, labels: labelled(["status": status, "reason": reason]))
            state.requestCounters[key] = counter
            return counter
        }
    }

    func connectionEvent(endpoint: String, _ event: ConnectionEvent) {
        state.withLock { state in
            state.retired ? Counter() : registry.counter(
                Self.connectionEvents, help: "APNs connection life-cycle events.",
                labels: labelled(["endpoint": endpoint, "event": event.rawValue]))
        }.increment()
    }

    func connectionsGauge(endpoint: String) -> Gauge {
        gauge(Self.connections, help: "Open APNs HTTP/2 connections.", labels: ["endpoint": endpoint])
    }

    func inFlightGauge(endpoint: String) -> Gauge {
        gauge(Self.streamsInFlight, help: "APNs requests on the wire.", labels: ["endpoint": endpoint])
    }

    func streamLimitGauge(endpoint: String, slot: Int) -> Gauge {
        gauge(Self.streamLimit, help: "Effective concurrent-stream limit of each APNs connection slot.",
              labels: ["endpoint": endpoint, "connection": String(slot)])
    }

    private func gauge(_ name: String, help: String, labels: [String: String]) -> Gauge {
        state.withLock { state in state.retired ? Gauge() : registry.gauge(name, help: help, labels: labelled(labels)) }
    }

    /// Takes this client's series out of the registry for good, once the client is gone (``APNsAppRouter``, when a
    /// reload removed its credential): every series carrying ``constantLabels`` is removed, and the client's late
    /// updates (connections closing after its shutdown) go to handles the registry does not hold. Without constant
    /// labels it does nothing: the series are then not this client's alone. Idempotent.
    func retire() {
        guard !constantLabels.isEmpty else { return }
        state.withLock { state in
            state.retired = true
            registry.removeSeries(labelled: constantLabels)
        }
    }

    /// The answers counted so far for one status/reason pair.
    func requestCount(status: String, reason: String) -> Double {
        registry.counter(Self.requestsTotal, help: Self.requestsHelp, labels: labelled(["status": status, "reason": reason])).value
    }
}
