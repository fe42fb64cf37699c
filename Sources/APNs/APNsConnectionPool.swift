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
    struct Slot {
        var connection: APNsPooledConnection?
    }

    struct State {
        var slots: [Slot]
        /// Every open connection (in a slot or draining), by `ObjectIdentifier` of the HTTP/2 connection.
        var open: [ObjectIdentifier: APNsPooledConnection] = [:]
        var pending = APNsRequestQueue()
        var connecting = false
        var consecutiveFailures = 0
        /// Why the last connection attempt failed; nil once one succeeds.
        var lastConnectError: String?
        var nextConnectAttempt: UInt64 = 0
        var nextConnectionID = 1
        var isShutdown = false
        var started = false
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
    private let timer: APNsMaintenanceTimer

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
        state = Mutex(State(slots: Array(repeating: Slot(), count: max(1, configuration.connectionsPerPool))))
        connectionsGauge = metrics.connectionsGauge(endpoint: endpoint.description)
        timer = APNsMaintenanceTimer()
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
        timer.start(interval: configuration.maintenanceInterval) { [weak self] in self?.maintain() }
    }

    deinit {
        timer.cancel()
    }

    // MARK: - Observation

    /// Requests on the wire and each slot's stream limit (0 for an empty slot).
    func snapshot() -> (inFlight: Int, limits: [Int], open: Int, pending: Int, lastConnectError: String?) {
        state.withLock { state in
            let inFlight = state.open.values.reduce(0) { $0 + $1.inFlight }
            let limits = state.slots.map { slot -> Int in
                guard let connection = slot.connection else { return 0 }
                return connection.authenticated ? connection.connection.maxConcurrentStreams : 1
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
        let now = tokens?.clock.now() ?? 0
        typealias Assignment = (APNsPooledConnection, [(APNsPendingRequest, APNsProviderToken?)])
        let assignments: [Assignment] = state.withLock { state in
            guard !state.pending.isEmpty else { return [] }
            var candidates: [APNsPooledConnection] = []
            for slot in state.slots {
                if let connection = slot.connection, !connection.retiring, connection.connection.state == .ready {
                    candidates.append(connection)
                }
            }
            guard !candidates.isEmpty else { return [] }
            var batches: [[(APNsPendingRequest, APNsProviderToken?)]] = Array(repeating: [], count: candidates.count)
            let capacities = candidates.map(\.capacity)
            while !state.pending.isEmpty {
                var best = -1
                var bestLoad = Int.max
                for (index, candidate) in candidates.enumerated()
                where candidate.inFlight < capacities[index] && candidate.inFlight < bestLoad {
                    best = index
                    bestLoad = candidate.inFlight
                }
                if best < 0 { break }
                let connection = candidates[best]
                guard let request = state.pending.popFirst() else { break }
                connection.inFlight += 1
                var token: APNsProviderToken?
                if let current {
                    if let pinned = connection.token, pinned != current,
                        tokens?.mayKeep(pinned, since: connection.tokenSince, now: now) == true
                    {
                        token = pinned
                    } else {
                        if connection.token != current {
                            connection.token = current
                            connection.tokenSince = now
                        }
                        token = current
                    }
                }
                batches[best].append((request, token))
            }
            return zip(candidates, batches).filter { !$0.1.isEmpty }.map { ($0.0, $0.1) }
        }
        for (connection, batch) in assignments { submit(batch, on: connection) }
        if tokens != nil, current == nil {
            // Signing failed: the pushes went without `authorization` and come back as MissingProviderToken
            // (fixCredentials), so the failure is visible per push rather than as timeouts.
            logger.debug("provider token could not be signed")
        }
    }

    private func submit(_ batch: [(APNsPendingRequest, APNsProviderToken?)], on connection: APNsPooledConnection) {
        var items: [(HTTP2Request, HTTP2Deadline?, HTTP2ClientConnection.Completion)] = []
        items.reserveCapacity(batch.count)
        for (pending, token) in batch {
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

    /// Runs every `maintenanceInterval`: expires queued pushes, replaces old connections, retries connects.
    func maintain() {
        let now = HTTP2Deadline.now()
        let maxAge = configuration.maximumConnectionAge
        var expired: [APNsPendingRequest] = []
        var tooOld: [APNsPooledConnection] = []
        state.withLock { state in
            while let first = state.pending.first, first.deadline <= now {
                _ = state.pending.popFirst()
                expired.append(first)
            }
            if let maxAge {
                for slot in state.slots {
                    if let connection = slot.connection, !connection.retiring,
                        HTTP2Deadline(uptimeNanoseconds: connection.openedNanoseconds) + maxAge <= now
                    {
                        tooOld.append(connection)
                    }
                }
            }
        }
        for pending in expired { finish(pending, .transportFailure(reason: .timeout, apnsID: pending.request.apnsID)) }
        for connection in tooOld { retire(connection, event: .replaced) }
        let hasPending = state.withLock { !$0.pending.isEmpty }
        if hasPending {
            ensureConnections()
            dispatch()
        }
    }

    func shutdown() {
        timer.cancel()
        let (pending, open) = state.withLock { state -> ([APNsPendingRequest], [APNsPooledConnection]) in
            state.isShutdown = true
            return (state.pending.removeAll(), Array(state.open.values))
        }
        for request in pending {
            finish(request, .transportFailure(reason: .notProcessed, apnsID: request.request.apnsID))
        }
        for connection in open { connection.connection.close() }
    }
}
