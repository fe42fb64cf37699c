import Runtime
import HTTP2
internal import Crypto
import Dispatch
import Synchronization
package import Telemetry
internal import Foundation

/// Sends each push with its app's credentials: one ``APNsClient`` per distinct credential (a `.p8` key serves every
/// bundle id of its apps; a certificate app has its own connections), all on one shared event-loop group.
///
/// A push picks its app by `apns-topic` without the push type's suffix (`com.example.app.voip` →
/// `com.example.app`). A bundle id no app serves is answered at once with `UnknownApp` (permanent). When more than
/// one credential is configured, each credential's pushes in flight are bounded
/// (``APNsAppsConfiguration/maximumInFlightPerCredential``); past the bound a push is answered at once with
/// `AppInFlightLimit` (retry later) instead of waiting, so an app whose key is revoked, whose answers are slow or
/// whose certificate is dead cannot fill the worker's window and stall the others.
///
/// ``apply(_:)`` swaps in a new configuration (re-reading every key and certificate file): new pushes use the new
/// clients at once; each old client keeps the pushes it has in flight, and is shut down when the last is answered.
/// A push is sent by exactly one client, so a reload neither loses nor repeats one.
///
/// - Important: thread-safe. Completions run on an event-loop thread (or the caller's, for immediate answers).
package final class APNsAppRouter: Sendable {
    /// One credential's client and its in-flight count.
    final class Slot: Sendable {
        let label: String
        let client: APNsClient
        let limit: Int?
        /// The certificate's `notAfter` (seconds since the epoch); nil for a token credential.
        let notAfter: Int64?
        /// Where the client's series are accounted for by ``label`` (nil when the client's series carry no
        /// `credential` label): released once the client is shut down.
        let credentialSeries: APNsAppRouterMetrics?
        /// Pushes sent through ``client`` and not answered yet; changed under the router's lock when sending.
        let inFlight = Atomic<Int>(0)
        let retired = Atomic<Bool>(false)
        private let closed = Atomic<Bool>(false)

        var isClosed: Bool { closed.load(ordering: .acquiring) }

        init(label: String, client: APNsClient, limit: Int?, notAfter: Int64?, credentialSeries: APNsAppRouterMetrics?) {
            self.label = label
            self.client = client
            self.limit = limit
            self.notAfter = notAfter
            self.credentialSeries = credentialSeries
        }

        /// Shuts the client down off the event loops, once; then its series go unless another client carries its
        /// label.
        func close() {
            guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
            DispatchQueue.global().async { [client, label, credentialSeries] in
                client.shutdown()
                credentialSeries?.releaseCredential(label, client: client.metrics)
            }
        }
    }

    /// Where one app's pushes go. A push admitted on a route carries it to its answer (``APNsPush/route``):
    /// ``admit()`` when it is sent, ``willAnswer(_:)`` and ``didAnswer()`` around its completion. A class: a push's
    /// route is copied a few times on its way (one retain each, not one per field).
    final class Route: Sendable {
        let slot: Slot
        let metrics: APNsAppRouterMetrics.App

        init(slot: Slot, metrics: APNsAppRouterMetrics.App) {
            self.slot = slot
            self.metrics = metrics
        }

        /// A push goes out on this route (its slot's in-flight count already raised under the router's lock).
        func admit() {
            metrics.inFlight.increment()
        }

        /// Before the push's completion: the app's series.
        func willAnswer(_ result: APNsResult) {
            metrics.inFlight.decrement()
            metrics.record(result)
        }

        /// After the push's completion: the slot's count, closing a retired client after its last answer.
        func didAnswer() {
            let left = slot.inFlight.subtract(1, ordering: .acquiringAndReleasing).newValue
            if left == 0 && slot.retired.load(ordering: .acquiring) { slot.close() }
        }
    }

    /// The configuration in force.
    struct Table: Sendable {
        var byBundleID: [String: Route] = [:]
        /// The app serving every bundle id, when it is configured so.
        var catchAll: Route?
        var slots: [Slot] = []
        /// Replaced clients still answering their in-flight pushes.
        var retiring: [Slot] = []
        var configuration: APNsAppsConfiguration?

        func route(for bundleID: String) -> Route? { byBundleID[bundleID] ?? catchAll }
    }

    package let metrics: APNsAppRouterMetrics
    private let registry: MetricsRegistry
    private let group: EventLoopGroup

    /// The clients' event loops, for the delayed work of the layers above (the worker's timers).
    package var timers: any JobScheduler { group }
    private let logger: Logger
    private let table = Mutex(Table())
    private let isShutdown = Atomic<Bool>(false)
    /// The environments ``connect(_:)`` opened: the clients a reload makes connect them at once too.
    private let connectedEnvironments = Mutex<[APNsEnvironment]>([])

    /// Loads every credential and sets up its client.
    /// - Parameters:
    ///   - configuration: the apps and the client settings they share.
    ///   - registry: for the per-app and per-credential series (and each client's `callpush_apns_*` series, labelled
    ///     `credential` unless a single app serves every bundle id).
    ///   - logger: one line per reload; keys and tokens are never logged.
    /// - Throws: ``APNsClientError`` (`configuration` for invalid apps, `credentials` for unreadable files).
    package init(
        configuration: APNsAppsConfiguration,
        registry: MetricsRegistry = MetricsRegistry(),
        logger: Logger = .disabled
    ) throws(APNsClientError) {
        self.registry = registry
        self.metrics = APNsAppRouterMetrics(registry: registry)
        self.logger = logger
        do throws(SocketError) {
            group = try EventLoopGroup(numberOfThreads: configuration.client.eventLoops)
        } catch {
            throw APNsClientError(.transport, "cannot start event loops: \(HTTP2Error(error))")
        }
        do {
            let table = try makeTable(configuration)
            self.table.withLock { $0 = table }
            showCredentials(of: table, replacing: [])
        } catch {
            group.shutdown()
            throw error
        }
    }

    // MARK: - Connecting and sending

    /// ``APNsClient/connect(_:)`` for every credential's client now, and for those each later ``apply(_:)`` makes.
    package func connect(_ environments: [APNsEnvironment] = APNsEnvironment.allCases) {
        connectedEnvironments.withLock { $0 = environments }
        for slot in table.withLock({ $0.slots }) { slot.client.connect(environments) }
    }

    /// Sends `request` with its app's credentials; `completion` runs exactly once.
    package func send(
        _ request: APNsRequest,
        environment: APNsEnvironment = .production,
        completion: @escaping @Sendable (APNsResult) -> Void
    ) {
        send([APNsClosurePush(request, environment: environment, completion: completion)])
    }

    /// Sends several pushes, each with its app's credentials: one lock to route them all, and one hand-off per
    /// credential's client. A push for no configured app is answered `UnknownApp` (permanent), one over its app's
    /// in-flight limit `AppInFlightLimit` (retry later), at once.
    package func send(_ pushes: [APNsPush]) {
        guard !pushes.isEmpty else { return }
        enum Admission { case unknown, limited(Route), admitted(Route) }
        let admissions = table.withLock { table -> [Admission] in
            var admissions: [Admission] = []
            admissions.reserveCapacity(pushes.count)
            var last: (bundleID: String, route: Route?)?
            for push in pushes {
                let bundleID = Self.bundleID(of: push)
                let route: Route?
                if let last, last.bundleID == bundleID {
                    route = last.route
                } else {
                    route = table.route(for: bundleID)
                    last = (bundleID, route)
                }
                guard let route else {
                    admissions.append(.unknown)
                    continue
                }
                if let limit = route.slot.limit, route.slot.inFlight.load(ordering: .relaxed) >= limit {
                    admissions.append(.limited(route))
                    continue
                }
                route.slot.inFlight.add(1, ordering: .relaxed)
                admissions.append(.admitted(route))
            }
            return admissions
        }
        // Runs of one client go together, in order.
        var runSlot: Slot?
        var run: [APNsPush] = []
        run.reserveCapacity(pushes.count)
        for (push, admission) in zip(pushes, admissions) {
            switch admission {
            case .unknown:
                answerUnknown(push)
            case .limited(let route):
                answerLimited(push, route)
            case .admitted(let route):
                if let runSlot, runSlot !== route.slot {
                    runSlot.client.send(started: run)
                    run.removeAll(keepingCapacity: true)
                }
                runSlot = route.slot
                route.admit()
                route.slot.client.start(push, route: route)
                run.append(push)
            }
        }
        runSlot?.client.send(started: run)
    }

    private func answerUnknown(_ push: APNsPush) {
        metrics.unknownApp.increment()
        push.answered(APNsResult(disposition: .permanent, status: nil, reason: APNsReason.unknownApp.rawValue,
                                 id: push.request.id))
    }

    private func answerLimited(_ push: APNsPush, _ route: Route) {
        route.metrics.limited.increment()
        let result = APNsResult(disposition: .retryLater, status: nil, reason: APNsReason.appInFlightLimit.rawValue,
                                id: push.request.id)
        route.metrics.record(result)
        push.answered(result)
    }

    /// Async form of ``send(_:environment:completion:)``.
    func send(_ request: APNsRequest, environment: APNsEnvironment = .production) async -> APNsResult {
        await withCheckedContinuation { continuation in
            send(request, environment: environment) { continuation.resume(returning: $0) }
        }
    }

    /// The bundle id `push` is for: its `apns-topic` without its push type's suffix. (Its request's fields read one
    /// by one: passing the request whole copied it, a retain and a release of each field, per push.)
    static func bundleID(of push: APNsPush) -> String {
        let topic = push.request.topic
        guard let suffix = push.request.pushType.topicSuffix, !suffix.isEmpty, topic.hasSuffix(suffix) else {
            return topic
        }
        return String(topic.dropLast(suffix.count))
    }

    // MARK: - Reloading

    /// Replaces the configuration: loads every credential anew (keys and certificates are read again), then routes
    /// new pushes to the new clients; each old client is shut down once its in-flight pushes are answered.
    /// - Throws: ``APNsClientError`` when the configuration is invalid or a file cannot be loaded; the configuration
    ///   in force stays.
    package func apply(_ configuration: APNsAppsConfiguration) throws(APNsClientError) {
        guard !isShutdown.load(ordering: .relaxed) else { return }
        let next: Table
        do {
            next = try makeTable(configuration)
        } catch {
            metrics.reloadCounter("failed").increment()
            throw error
        }
        let old = table.withLock { table -> [Slot] in
            let old = table.slots
            for slot in old { slot.retired.store(true, ordering: .releasing) }
            let retiring = table.retiring.filter { !$0.isClosed } + old
            table = next
            table.retiring = retiring
            return old
        }
        for slot in old where slot.inFlight.load(ordering: .acquiring) == 0 { slot.close() }
        let environments = connectedEnvironments.withLock { $0 }
        for slot in next.slots { slot.client.connect(environments) }
        showCredentials(of: next, replacing: old)
        metrics.reloadCounter("ok").increment()
        logger.info("APNs apps configuration applied", metadata: [
            "apns.apps": String(configuration.apps.count), "apns.credentials": String(next.slots.count),
        ])
    }

    /// The configuration in force.
    package var configuration: APNsAppsConfiguration? { table.withLock { $0.configuration } }

    /// The client serving `bundleID` now (for status and tests).
    func client(for bundleID: String) -> APNsClient? { table.withLock { $0.route(for: bundleID)?.slot.client } }

    private func makeTable(_ configuration: APNsAppsConfiguration) throws(APNsClientError) -> Table {
        let problems = configuration.problems
        guard problems.isEmpty else { throw APNsClientError(.configuration, problems.joined(separator: "; ")) }
        let groups = configuration.credentialGroups
        let labelled = configuration.apps.first?.bundleID != nil
        let limit = groups.count > 1 ? configuration.maximumInFlightPerCredential : nil
        var table = Table(configuration: configuration)
        let credentialSeries = labelled ? metrics : nil
        for group in groups {
            var client = configuration.client
            client.credentials = group.credentials
            credentialSeries?.retainCredential(group.label)
            // Undoes this table: the clients made so far, and this group's.
            func abandon(_ made: APNsClient?) {
                made?.shutdown()
                credentialSeries?.releaseCredential(group.label, client: made?.metrics)
                for slot in table.slots { slot.close() }
            }
            let made: APNsClient
            do throws(APNsClientError) {
                made = try APNsClient(
                    configuration: client, metrics: registry, group: self.group, logger: logger,
                    metricLabels: labelled ? ["credential": group.label] : [:])
            } catch {
                abandon(nil)
                throw APNsClientError(error.code, "credential \(group.label): \(error.reason)")
            }
            var notAfter: Int64?
            if case .certificate(let certificate) = group.credentials.kind {
                do {
                    notAfter = try CertificateValidity(pem: certificate.loadPEM().certificatePEM).notAfter
                } catch {
                    abandon(made)
                    throw APNsClientError(
                        .credentials, "credential \(group.label): cannot read the certificate's expiry: \(error.reason)")
                }
            }
            let slot = Slot(label: group.label, client: made, limit: limit, notAfter: notAfter,
                            credentialSeries: credentialSeries)
            table.slots.append(slot)
            for app in group.apps {
                let route = Route(slot: slot, metrics: metrics.app(app.metricLabel))
                if let bundleID = app.bundleID { table.byBundleID[bundleID] = route } else { table.catchAll = route }
            }
        }
        return table
    }

    /// Sets each credential's load time and certificate expiry, and removes the series of credentials that are gone.
    private func showCredentials(of table: Table, replacing old: [Slot]) {
        let now = Date().timeIntervalSince1970
        for slot in table.slots {
            metrics.credentialLoaded(slot.label, atSecondsSinceEpoch: now)
            if let notAfter = slot.notAfter { metrics.certificateExpires(slot.label, atSecondsSinceEpoch: notAfter) }
        }
        let kept = Set(table.slots.map(\.label))
        for label in Set(old.map(\.label)).subtracting(kept) { metrics.forgetCredential(label) }
    }

    // MARK: - Shutdown

    /// Answers queued pushes with `NotProcessed`, closes every connection and stops the event loops. Must not run
    /// on an event-loop thread. Idempotent.
    package func shutdown() {
        if isShutdown.exchange(true, ordering: .acquiringAndReleasing) { return }
        let slots = table.withLock { table -> [Slot] in
            defer { table = Table() }
            return table.slots + table.retiring
        }
        for slot in slots { slot.client.shutdown() }
        group.shutdown()
    }
}
