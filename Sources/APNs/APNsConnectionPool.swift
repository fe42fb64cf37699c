import Dispatch
import HTTP2
import Synchronization
import Telemetry

/// N HTTP/2 connections to one endpoint with one set of credentials, and the queue of pushes waiting for a stream.
///
/// Connections open one after another (lazily, on the first push), with exponential backoff after a failed connect.
/// Each push goes to the least-loaded ready connection that has a free stream under that connection's current limit
/// (1 until a token-authenticated push succeeded, then the server's SETTINGS). A connection is replaced after
/// GOAWAY, when it breaks, when it gets too old, and after answers that call for a new connection
/// (``APNsResult/needsNewConnection``): the replacement opens at once, the old one drains its streams and closes.
///
/// - Important: thread-safe; all pool state is behind one `Mutex`, and network work happens outside it.
final class APNsConnectionPool: Sendable {
    /// One open connection: what stays (shared with its completions) and what changes.
    struct OpenConnection {
        let pooled: APNsPooledConnection
        var usage: APNsConnectionUsage
    }

    struct State {
        /// The connection serving each slot (its key in `open`); nil while the slot's connection is being opened.
        var slots: [ObjectIdentifier?]
        /// Every open connection (in a slot or draining), by ``APNsPooledConnection/key``.
        var open: [ObjectIdentifier: OpenConnection] = [:]
        var pending = APNsRequestQueue()
        var connecting = false
        var consecutiveFailures = 0
        /// Why the last connection attempt failed; nil once one succeeds.
        var lastConnectError: String?
        var nextConnectAttempt: HTTP2Deadline = .init(uptimeNanoseconds: 0)
        var nextConnectionID = 1
        var isShutdown = false
        var started = false

        /// Stops giving `key` new pushes and frees its slot; false when it was retiring already.
        mutating func retire(_ key: ObjectIdentifier) -> Bool {
            guard let open = open[key], !open.usage.retiring else { return false }
            self.open[key]?.usage.retiring = true
            if slots[open.pooled.slot] == key { slots[open.pooled.slot] = nil }
            return true
        }
    }

    let endpoint: APNsEndpoint
    let label: String
    let configuration: APNsClientConfiguration
    let tls: TLSContext
    let group: EventLoopGroup
    let tokens: APNsTokenProvider?
    let metrics: APNsClientMetrics
    let logger: Logger
    let state: Mutex<State>
    private let connectionsGauge: Gauge
    /// The periodic ``maintain()``, on one of the group's loops; set at the end of `init`.
    private let maintenance = Mutex<RepeatedTask?>(nil)

    init(
        endpoint: APNsEndpoint,
        configuration: APNsClientConfiguration,
        tls: TLSContext,
        group: EventLoopGroup,
        tokens: APNsTokenProvider?,
        metrics: APNsClientMetrics,
        logger: Logger
    ) {
        self.endpoint = endpoint
        label = endpoint.description
        self.configuration = configuration
        self.tls = tls
        self.group = group
        self.tokens = tokens
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "apns.endpoint"] = endpoint.description
        self.logger = logger
        state = Mutex(State(slots: Array(repeating: nil, count: max(1, configuration.connectionsPerPool))))
        connectionsGauge = metrics.connectionsGauge(endpoint: endpoint.description)
        let inFlight = metrics.inFlightGauge(endpoint: label)
        let limits = (0..<max(1, configuration.connectionsPerPool)).map {
            metrics.streamLimitGauge(endpoint: endpoint.description, slot: $0)
        }
        metrics.registry.addCollector { [weak self] in
            guard let self else { return }
            let snapshot = self.snapshot()
            inFlight.set(snapshot.inFlight)
            for (index, gauge) in limits.enumerated() { gauge.set(snapshot.limits[index]) }
        }
        let task = group.next().scheduleRepeated(every: configuration.maintenanceInterval) { [weak self] in
            self?.maintain()
        }
        maintenance.withLock { $0 = task }
    }

    deinit {
        maintenance.withLock { $0?.cancel() }
    }

    // MARK: - Observation

    /// Requests on the wire and each slot's stream limit (0 for an empty slot).
    func snapshot() -> (inFlight: Int, limits: [Int], open: Int, pending: Int, lastConnectError: String?) {
        state.withLock { state in
            let inFlight = state.open.values.reduce(0) { $0 + $1.usage.inFlight }
            let limits = state.slots.map { key -> Int in
                guard let key, let open = state.open[key] else { return 0 }
                return open.usage.authenticated ? open.pooled.connection.maxConcurrentStreams : 1
            }
            return (inFlight, limits, state.open.count, state.pending.count, state.lastConnectError)
        }
    }

    // MARK: - Sending

    func send(_ pending: APNsPendingRequest) {
        let accepted = state.withLock { state -> Bool in
            if state.isShutdown { return false }
            state.pending.append(pending)
            return true
        }
        guard accepted else {
            finish(pending, .transportFailure(reason: .notProcessed, apnsID: pending.request.apnsID))
            return
        }
        dispatch()
        ensureConnections()
    }

    /// Moves queued pushes onto connections with free streams (least-loaded first), then submits them.
    func dispatch() {
        let current = tokens?.current()
        let now = tokens?.clock.now().seconds ?? 0
        typealias Assignment = (connection: APNsPooledConnection, token: APNsProviderToken?, batch: [APNsPendingRequest])
        let assignments: [Assignment] = state.withLock { state in
            guard !state.pending.isEmpty else { return [] }
            var candidates: [APNsPooledConnection] = []
            var loads: [Int] = []
            var capacities: [Int] = []
            for case let key? in state.slots {
                guard let open = state.open[key], !open.usage.retiring, open.pooled.connection.state == .ready
                else { continue }
                candidates.append(open.pooled)
                loads.append(open.usage.inFlight)
                capacities.append(open.usage.capacity(of: open.pooled))
            }
            guard !candidates.isEmpty else { return [] }
            var batches: [[APNsPendingRequest]] = Array(repeating: [], count: candidates.count)
            while !state.pending.isEmpty {
                var best = -1
                var bestLoad = Int.max
                for index in candidates.indices where loads[index] < capacities[index] && loads[index] < bestLoad {
                    best = index
                    bestLoad = loads[index]
                }
                if best < 0 { break }
                guard let request = state.pending.popFirst() else { break }
                loads[best] += 1
                batches[best].append(request)
            }
            var assignments: [Assignment] = []
            for index in candidates.indices where !batches[index].isEmpty {
                let key = candidates[index].key
                state.open[key]?.usage.inFlight = loads[index]
                let token = current.flatMap { state.open[key]?.usage.token(for: $0, now: now, tokens: tokens) }
                assignments.append((candidates[index], token, batches[index]))
            }
            return assignments
        }
        for assignment in assignments { submit(assignment.batch, token: assignment.token, on: assignment.connection) }
        if tokens != nil, current == nil {
            // Signing failed: the pushes went without `authorization` and come back as MissingProviderToken
            // (fixCredentials), so the failure is visible per push rather than as timeouts.
            logger.debug("provider token could not be signed")
        }
    }

    private func submit(_ batch: [APNsPendingRequest], token: APNsProviderToken?, on connection: APNsPooledConnection) {
        var items: [(HTTP2Request, HTTP2Deadline?, HTTP2ClientConnection.Completion)] = []
        items.reserveCapacity(batch.count)
        for pending in batch {
            var headers = pending.headers
            if let token { headers.insert(HTTP2Header("authorization", token.authorizationValue), at: 0) }
            let request = HTTP2Request(
                method: "POST", path: pending.request.path, authority: endpoint.authority, headers: headers,
                body: pending.request.payload)
            items.append((request, pending.deadline, { [self] result in
                self.completed(pending, on: connection, token: token, result: result)
            }))
        }
        if items.count == 1 {
            connection.connection.submit(items[0].0, deadline: items[0].1, completion: items[0].2)
        } else {
            connection.connection.submit(batch: items)
        }
    }

    /// Answers a push: metrics, then its completion.
    func finish(_ pending: APNsPendingRequest, _ result: APNsResult) {
        metrics.recordAnswer(result, seconds: pending.elapsedSeconds)
        pending.completion(result)
    }

    /// Puts a push back at the head of the queue (resend), or answers it when the pool is shut down.
    func requeue(_ pending: APNsPendingRequest, otherwise result: APNsResult) {
        let accepted = state.withLock { state -> Bool in
            if state.isShutdown || HTTP2Deadline.now() >= pending.deadline { return false }
            state.pending.prepend(pending)
            return true
        }
        if accepted {
            dispatch()
            ensureConnections()
        } else {
            finish(pending, result)
        }
    }

    // MARK: - Maintenance

    /// Runs every `maintenanceInterval` on one of the group's loops: expires queued pushes, replaces old
    /// connections, retries connects.
    func maintain() {
        let now = HTTP2Deadline.now()
        let maxAge = configuration.maximumConnectionAge
        let (expired, tooOld, hasPending) = state.withLock { state in
            var expired: [APNsPendingRequest] = []
            while let first = state.pending.first, first.deadline <= now {
                _ = state.pending.popFirst()
                expired.append(first)
            }
            var tooOld: [APNsPooledConnection] = []
            if let maxAge {
                for case let key? in state.slots {
                    if let open = state.open[key], !open.usage.retiring, open.pooled.opened + maxAge <= now {
                        tooOld.append(open.pooled)
                    }
                }
            }
            return (expired, tooOld, !state.pending.isEmpty)
        }
        for pending in expired { finish(pending, .transportFailure(reason: .timeout, apnsID: pending.request.apnsID)) }
        for connection in tooOld { retire(connection, event: .replaced) }
        if hasPending {
            ensureConnections()
            dispatch()
        }
    }

    func shutdown() {
        maintenance.withLock { $0?.cancel() }
        let (pending, open) = state.withLock { state -> ([APNsPendingRequest], [APNsPooledConnection]) in
            state.isShutdown = true
            return (state.pending.removeAll(), state.open.values.map(\.pooled))
        }
        for request in pending {
            finish(request, .transportFailure(reason: .notProcessed, apnsID: request.request.apnsID))
        }
        for connection in open { connection.connection.close() }
    }
}
