import Dispatch
import Runtime
import TLS
import HTTP2
import Synchronization
import Telemetry

/// N HTTP/2 connections to one endpoint with one set of credentials, and the queue of pushes waiting for a stream.
///
/// Connections open one after another, at the first push or at ``start()``, with exponential backoff after a failed
/// connect; after ``start()`` a failed connect is retried even while no push waits.
/// Each push goes to the least-loaded ready connection that has a free stream under that connection's current limit
/// (1 until a token-authenticated push succeeded, then the server's SETTINGS). A connection is replaced after
/// GOAWAY, when it breaks, when it gets too old, and after answers that call for a new connection
/// (``APNsResult/needsNewConnection``): the replacement opens at once, the old one drains its streams and closes.
///
/// - Important: thread-safe; all pool state is behind one `Mutex`, and network work happens outside it.
final class APNsConnectionPool: Sendable {
    /// One open connection: what stays (shared with its completions) and what changes. A class, so the pool mutates
    /// its usage in place (a dictionary or array element of this size would be copied, or its accessor would allocate,
    /// on every push); it never leaves the pool's lock.
    final class OpenConnection {
        let pooled: APNsPooledConnection
        /// Changed only under the pool's lock, never while another access to it is under way: without the runtime's
        /// exclusivity check (about 60 instructions per access, on every push).
        @exclusivity(unchecked) var usage: APNsConnectionUsage

        init(pooled: APNsPooledConnection, usage: APNsConnectionUsage) {
            self.pooled = pooled
            self.usage = usage
        }
    }

    struct State {
        /// The connection serving each slot; nil while the slot's connection is being opened.
        var slots: [OpenConnection?]
        /// Every open connection (in a slot or draining), by ``APNsPooledConnection/key``.
        var open: [ObjectIdentifier: OpenConnection] = [:]
        var pending = FIFOQueue<APNsPush>()
        var connecting = false
        var consecutiveFailures = 0
        /// Why the last connection attempt failed; nil once one succeeds.
        var lastConnectError: String?
        var nextConnectAttempt: HTTP2Deadline = .init(uptimeNanoseconds: 0)
        var nextConnectionID = 1
        /// ``open``'s count and the requests on the wire as last added to their gauges (see ``countChange(_:in:)``).
        var countedConnections = 0
        var countedInFlight = 0
        var isShutdown = false
        var started = false
        /// ``start()`` was called: the maintenance timer retries a failed connect even with nothing queued (a pool
        /// started by its first push retries only while pushes wait).
        var keepsOpen = false

        /// Stops giving `key` new pushes and frees its slot; false when it was retiring already.
        mutating func retire(_ key: ObjectIdentifier) -> Bool {
            guard let open = open[key], !open.usage.retiring else { return false }
            open.usage.retiring = true
            if slots[open.pooled.slot] === open { slots[open.pooled.slot] = nil }
            return true
        }

        /// `value` minus what `counted` holds, and `counted` set to `value`: what a pool adds to a gauge it may share
        /// with another client's pool (after a reload that keeps a credential both count into the same series until
        /// the old one is gone), instead of setting the gauge to its own count.
        mutating func countChange(_ value: Int, in counted: WritableKeyPath<State, Int>) -> Int {
            defer { self[keyPath: counted] = value }
            return value - self[keyPath: counted]
        }

        /// Whether ``ensureConnections()`` has a slot to fill now (it checks the rest).
        var mayOpenConnection: Bool { !isShutdown && !connecting && slots.contains { $0 == nil } }

        /// No connection is open and the last connect failed: pushes are handed back at once
        /// (``APNsReason/connectFailed``) until one opens.
        var isDown: Bool { open.isEmpty && lastConnectError != nil }

        /// What each slot's connection can take while it takes new pushes (nil for a slot without one): read once
        /// per dispatch, so choosing a connection push by push retains none.
        func loads() -> [Load?] {
            slots.map { open in
                guard let open, !open.usage.retiring, open.pooled.connection.state == .ready else { return nil }
                return Load(inFlight: open.usage.inFlight, capacity: open.usage.capacity(of: open.pooled))
            }
        }

        /// Sets each connection's in-flight count to what `loads` (from ``loads()``) counted.
        func store(_ loads: [Load?]) {
            for (index, load) in zip(slots.indices, loads) {
                if let load, let open = slots[index] { open.usage.inFlight = load.inFlight }
            }
        }
    }

    /// A connection's requests in flight and how many it may have.
    struct Load {
        var inFlight: Int
        let capacity: Int

        /// The slot of the least-loaded connection of `loads` with a free stream (the first of equals), if any.
        static func leastLoaded(_ loads: [Load?]) -> Int? {
            var best: (slot: Int, inFlight: Int)?
            for (slot, load) in loads.enumerated() {
                guard let load, load.inFlight < load.capacity else { continue }
                if best.map({ load.inFlight < $0.inFlight }) ?? true { best = (slot, load.inFlight) }
            }
            return best?.slot
        }
    }

    let endpoint: APNsEndpoint
    let label: String
    /// `:authority` of every request.
    let authority: String
    let configuration: APNsClientConfiguration
    let tls: TLSContext
    let group: EventLoopGroup
    let tokens: APNsTokenProvider?
    let metrics: APNsClientMetrics
    let logger: Logger
    let state: Mutex<State>
    /// `callpush_apns_connections` and `callpush_apns_streams_in_flight` of the endpoint, which this pool adds its
    /// changes to (``State/countChange(_:in:)``).
    let connectionsGauge: Gauge
    private let inFlightGauge: Gauge
    /// A ``dispatch()`` for streams freed by answers is scheduled on a loop and has not started yet.
    let dispatchScheduled = Atomic<Bool>(false)
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
        authority = endpoint.authority
        state = Mutex(State(slots: Array(repeating: nil, count: max(1, configuration.connectionsPerPool))))
        connectionsGauge = metrics.connectionsGauge(endpoint: endpoint.description)
        inFlightGauge = metrics.inFlightGauge(endpoint: label)
        let limits = (0..<max(1, configuration.connectionsPerPool)).map {
            metrics.streamLimitGauge(endpoint: endpoint.description, slot: $0)
        }
        metrics.registry.addCollector { [weak self] in
            guard let self else { return }
            let snapshot = self.snapshot()
            let change = state.withLock { $0.countChange(snapshot.inFlight, in: \.countedInFlight) }
            if change != 0 { inFlightGauge.increment(by: Double(change)) }
            for (index, gauge) in limits.enumerated() { gauge.set(snapshot.limits[index]) }
        }
        let task = group.next().scheduleRepeated(every: configuration.maintenanceInterval) { [weak self] in
            self?.maintain()
        }
        maintenance.withLock { $0 = task }
    }

    deinit {
        maintenance.withLock { $0?.cancel() }
        // What this pool still counts in shared gauges leaves with it.
        let (connections, inFlight) = state.withLock { ($0.countedConnections, $0.countedInFlight) }
        if connections != 0 { connectionsGauge.decrement(by: Double(connections)) }
        if inFlight != 0 { inFlightGauge.decrement(by: Double(inFlight)) }
    }

    // MARK: - Observation

    /// Requests on the wire and each slot's stream limit (0 for an empty slot).
    func snapshot() -> (inFlight: Int, limits: [Int], open: Int, pending: Int, lastConnectError: String?) {
        state.withLock { state in
            let inFlight = state.open.values.reduce(0) { $0 + $1.usage.inFlight }
            let limits = state.slots.map { open -> Int in
                guard let open else { return 0 }
                return open.usage.authenticated ? open.pooled.connection.maxConcurrentStreams : 1
            }
            return (inFlight, limits, state.open.count, state.pending.count, state.lastConnectError)
        }
    }

    // MARK: - Sending

    /// Sends several started pushes (``APNsPush/start(route:timeoutNanoseconds:)``): one lock to queue them all, one dispatch (and
    /// so one hand-off per connection). While the pool is down (``State/isDown``) they are handed back at once, and a
    /// connect is tried when its back-off allows.
    func send(batch: [APNsPush]) {
        guard !batch.isEmpty else { return }
        let (refusal, mayOpen) = state.withLock { state -> (APNsReason?, Bool) in
            if state.isShutdown { return (.notProcessed, false) }
            if state.isDown { return (.connectFailed, state.mayOpenConnection) }
            for pending in batch { state.pending.append(pending) }
            return (nil, state.mayOpenConnection)
        }
        if let refusal {
            for pending in batch { finish(pending, .transportFailure(reason: refusal, id: pending.request.id)) }
        } else {
            dispatch()
        }
        if mayOpen { ensureConnections() }
    }

    /// What one ``dispatch()`` moves onto connections: nothing, one push (no array is built for the common case of
    /// one push, or one freed stream), or batches per connection.
    private enum Assignments {
        case none
        case one(APNsPooledConnection, APNsProviderToken?, APNsPush)
        case many([(connection: APNsPooledConnection, token: APNsProviderToken?, batch: [APNsPush])])
    }

    /// Moves queued pushes onto connections with free streams (least-loaded first), then submits them.
    func dispatch() {
        let current = tokens?.current()
        let now = tokens?.clock.now().seconds ?? 0
        let assignments: Assignments = state.withLock { state in
            guard !state.pending.isEmpty else { return .none }
            var loads = state.loads()
            guard var slot = Load.leastLoaded(loads), let target = state.slots[slot],
                  let first = state.pending.popFirst() else { return .none }
            let token = { (open: OpenConnection) in current.map { open.usage.token(for: $0, now: now, tokens: self.tokens) } }
            loads[slot]?.inFlight += 1
            guard !state.pending.isEmpty, let next = Load.leastLoaded(loads) else {
                target.usage.inFlight += 1
                return .one(target.pooled, token(target), first)
            }
            // More than one: gather a batch per connection (slot order).
            var batches: [[APNsPush]] = Array(repeating: [], count: state.slots.count)
            batches[slot].append(first)
            slot = next
            while let request = state.pending.popFirst() {
                loads[slot]?.inFlight += 1
                batches[slot].append(request)
                guard !state.pending.isEmpty, let next = Load.leastLoaded(loads) else { break }
                slot = next
            }
            state.store(loads)
            var many: [(connection: APNsPooledConnection, token: APNsProviderToken?, batch: [APNsPush])] = []
            for case let open? in state.slots where !batches[open.pooled.slot].isEmpty {
                many.append((open.pooled, token(open), batches[open.pooled.slot]))
            }
            return .many(many)
        }
        switch assignments {
        case .none:
            break
        case .one(let connection, let token, let pending):
            submit(pending, token: token, on: connection)
        case .many(let many):
            for assignment in many { submit(assignment.batch, token: assignment.token, on: assignment.connection) }
        }
        if tokens != nil, current == nil {
            // Signing failed: the pushes went without `authorization` and come back as MissingProviderToken
            // (fixCredentials), so the failure is visible per push rather than as timeouts.
            logger.debug("provider token could not be signed")
        }
    }

    /// Readies `push` to go on `connection` as a stream: its HTTP/2 request (its header fields it writes itself, with
    /// `token`: ``APNsPush/writeHeaderFields(_:)``), and what its answer needs (``APNsPush/completed(_:)`` brings it
    /// back to ``completed(_:on:token:result:)``).
    private func prepare(_ push: APNsPush, token: APNsProviderToken?, on connection: APNsPooledConnection) {
        // No `path`: the push writes its `:path` from its device token (``APNsPush/writePath(_:)``).
        push.http2Request = HTTP2Request(path: "", authority: authority, body: push.request.payload)
        push.pool = self
        push.connection = connection
        push.token = token
    }

    private func submit(_ push: APNsPush, token: APNsProviderToken?, on connection: APNsPooledConnection) {
        prepare(push, token: token, on: connection)
        connection.connection.submit(push)
    }

    private func submit(_ batch: [APNsPush], token: APNsProviderToken?, on connection: APNsPooledConnection) {
        for push in batch { prepare(push, token: token, on: connection) }
        connection.connection.submit(batch: batch)
    }

    /// Answers a push: metrics, then its completion.
    func finish(_ push: APNsPush, _ result: consuming APNsResult) {
        metrics.recordAnswer(result, seconds: push.elapsedSeconds)
        push.answer(result)
    }

    /// Puts a push back at the head of the queue (resend), or answers it when the pool is shut down.
    func requeue(_ push: APNsPush, otherwise result: APNsResult) {
        let accepted = state.withLock { state -> Bool in
            if state.isShutdown || HTTP2Deadline.now() >= push.deadline { return false }
            state.pending.prepend(push)
            return true
        }
        if accepted {
            dispatch()
            ensureConnections()
        } else {
            finish(push, result)
        }
    }

    // MARK: - Maintenance

    /// Runs every `maintenanceInterval` on one of the group's loops: expires queued pushes, replaces old
    /// connections, retries connects.
    func maintain() {
        let now = HTTP2Deadline.now()
        let maxAge = configuration.maximumConnectionAge
        let (expired, tooOld, hasPending, missing) = state.withLock { state in
            var expired: [APNsPush] = []
            while let first = state.pending.first, first.deadline <= now {
                _ = state.pending.popFirst()
                expired.append(first)
            }
            var tooOld: [APNsPooledConnection] = []
            if let maxAge {
                for case let open? in state.slots where !open.usage.retiring && open.pooled.opened + maxAge <= now {
                    tooOld.append(open.pooled)
                }
            }
            return (expired, tooOld, !state.pending.isEmpty, state.keepsOpen && state.mayOpenConnection)
        }
        for pending in expired { finish(pending, .transportFailure(reason: .timeout, id: pending.request.id)) }
        for connection in tooOld { retire(connection, event: .replaced) }
        if hasPending {
            ensureConnections()
            dispatch()
        } else if missing {
            ensureConnections()
        }
    }

    func shutdown() {
        maintenance.withLock { $0?.cancel() }
        let (pending, open) = state.withLock { state -> ([APNsPush], [APNsPooledConnection]) in
            state.isShutdown = true
            return (state.pending.takeAll(), state.open.values.map(\.pooled))
        }
        for request in pending {
            finish(request, .transportFailure(reason: .notProcessed, id: request.request.id))
        }
        for connection in open { connection.connection.close() }
    }
}
