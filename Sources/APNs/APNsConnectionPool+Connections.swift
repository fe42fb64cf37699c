import Dispatch
import Runtime
import HTTP2

extension APNsConnectionPool {
    // MARK: - Opening connections

    /// Opens the pool's connections now instead of at its first push, and keeps its size from then on (a failed
    /// connect is retried after the reconnect backoff whether or not pushes wait).
    func start() {
        state.withLock { state in
            state.started = true
            state.keepsOpen = true
        }
        ensureConnections()
    }

    /// Opens the next missing connection, one at a time, honouring the reconnect backoff.
    func ensureConnections() {
        let slot: (index: Int, id: Int)? = state.withLock { state in
            guard !state.isShutdown, !state.connecting,
                let index = state.slots.firstIndex(where: { $0 == nil })
            else { return nil }
            // Open connections only when there is work or once started (a lazily started pool keeps its size).
            guard state.started || !state.pending.isEmpty else { return nil }
            guard HTTP2Deadline.now() >= state.nextConnectAttempt else { return nil }
            state.started = true
            state.connecting = true
            defer { state.nextConnectionID += 1 }
            return (index, state.nextConnectionID)
        }
        guard let slot else { return }
        var settings = HTTP2ClientConfiguration(
            maxConcurrentStreams: configuration.maxConcurrentStreamsPerConnection,
            connectTimeout: configuration.connectTimeout,
            pingInterval: configuration.pingInterval,
            pingTimeout: configuration.pingTimeout)
        settings.deadlineCheckInterval = .milliseconds(10)
        settings.firstStreamID = configuration.firstStreamID
        // APNs answers in a few hundred bytes: a peer that sends more than this on one stream loses its connection.
        settings.maximumResponseSize = 65_536
        let h2 = settings
        let loop = group.next()
        // Name resolution blocks: do it off the event loops and off the caller. The connection id rotates the first
        // address tried, spreading the pool's connections over all of them.
        DispatchQueue.global().async { [self] in
            HTTP2ClientConnection.connect(
                host: endpoint.host, port: endpoint.port, tls: tls, configuration: h2, on: loop, logger: logger,
                addresses: configuration.addressResolver?(endpoint), addressRotation: slot.id - 1,
                stateHandler: { [weak self] connection, newState in self?.stateChanged(connection, newState) }
            ) { [self] result in
                self.connectFinished(slot: slot.index, id: slot.id, result: result)
            }
        }
    }

    private func connectFinished(slot: Int, id: Int, result: Result<HTTP2ClientConnection, HTTP2Error>) {
        switch result {
        case .success(let connection):
            let pooled = APNsPooledConnection(id: id, slot: slot, connection: connection, opened: .now())
            let accepted = state.withLock { state -> Bool in
                state.connecting = false
                // ``consecutiveFailures`` stays until the connection proves healthy (``connectionEnded(_:in:)``).
                state.lastConnectError = nil
                state.nextConnectAttempt = HTTP2Deadline(uptimeNanoseconds: 0)
                guard !state.isShutdown, connection.state.rawValue <= HTTP2ConnectionState.ready.rawValue else {
                    return false
                }
                let open = OpenConnection(pooled: pooled, usage: APNsConnectionUsage(authenticated: tokens == nil))
                state.slots[slot] = open
                state.open[pooled.key] = open
                return true
            }
            guard accepted else {
                connection.close()
                ensureConnections()
                return
            }
            connectionsGaugeChanged()
            metrics.connectionEvent(endpoint: label, .opened)
            logger.debug("APNs connection opened", metadata: [
                "apns.connection": String(id), "apns.address": connection.remoteAddress ?? "",
            ])
            dispatch()
            ensureConnections()
        case .failure(let error):
            let (delay, waiting) = state.withLock { state -> (Duration, [APNsPush]) in
                state.connecting = false
                state.lastConnectError = error.description
                let delay = backOff(&state)
                // Down: what waits is handed back now rather than after the request timeout.
                var waiting: [APNsPush] = []
                if state.isDown { while let pending = state.pending.popFirst() { waiting.append(pending) } }
                return (delay, waiting)
            }
            metrics.connectionEvent(endpoint: label, .failed)
            logger.info("APNs connect failed", metadata: ["error": error.description, "retry.in": "\(delay)"])
            for pending in waiting { finish(pending, .transportFailure(reason: .connectFailed, id: pending.request.id)) }
            // The maintenance timer retries once the backoff has passed (when pushes wait, or always after `start()`).
        }
    }

    /// Adds the change in this pool's open connections to the (possibly shared) connections gauge.
    func connectionsGaugeChanged() {
        let change = state.withLock { $0.countChange($0.open.count, in: \.countedConnections) }
        if change != 0 { connectionsGauge.increment(by: Double(change)) }
    }

    // MARK: - Connection state

    /// A connection stopped serving (GOAWAY, or closed before it went away): one that answered a request or served at
    /// least ``APNsClientConfiguration/healthyConnectionAge`` clears the failure count, so its replacement opens at
    /// once; one that ended sooner without an answer counts as a failed connect and its replacement waits the
    /// back-off, so a peer that sends GOAWAY or resets right after every handshake does not get a handshake storm. (A
    /// busy connection may reach a peer's GOAWAY-after-N-requests within a second: that is no failed connect, and
    /// counting it so grew the back-off to its maximum while pushes waited.)
    private func connectionEnded(_ key: ObjectIdentifier, in state: inout State) {
        guard let open = state.open[key], !open.usage.retiring else { return }
        if open.usage.answered || HTTP2Deadline.now() >= open.pooled.opened + configuration.healthyConnectionAge {
            state.consecutiveFailures = 0
        } else {
            _ = backOff(&state)
        }
    }

    /// Counts one more failure and sets when the next connect may start: the back-off for that many failures, ±20 %
    /// so that workers that lost APNs together do not reconnect together.
    private func backOff(_ state: inout State) -> Duration {
        state.consecutiveFailures += 1
        let delay = configuration.reconnectDelay(afterFailures: state.consecutiveFailures) * Double.random(in: 0.8...1.2)
        state.nextConnectAttempt = .after(delay)
        return delay
    }

    private func stateChanged(_ connection: HTTP2ClientConnection, _ newState: HTTP2ConnectionState) {
        let key = ObjectIdentifier(connection)
        switch newState {
        case .connecting, .ready:
            return
        case .goingAway:
            // GOAWAY (or a local close that started draining): stop using it, open a replacement.
            let moved = state.withLock { state in
                connectionEnded(key, in: &state)
                return state.retire(key)
            }
            if moved {
                metrics.connectionEvent(endpoint: label, .goaway)
                logger.debug("APNs connection got GOAWAY")
            }
            ensureConnections()
            dispatch()
        case .closed:
            let unexpected = state.withLock { state -> Bool? in
                guard state.open[key] != nil else { return nil }
                if state.open[key]?.usage.retiring == false { connectionEnded(key, in: &state) }
                let wasActive = state.retire(key)
                state.open[key] = nil
                return wasActive
            }
            guard let unexpected else { return }
            if unexpected { metrics.connectionEvent(endpoint: label, .failed) }
            connectionsGaugeChanged()
            ensureConnections()
            dispatch()
        }
    }

    /// Stops sending on `connection`, opens its replacement, and closes it once its streams are answered.
    func retire(_ connection: APNsPooledConnection, event: APNsClientMetrics.ConnectionEvent) {
        let (changed, closeNow) = state.withLock { state -> (Bool, Bool) in
            guard state.retire(connection.key) else { return (false, false) }
            return (true, state.open[connection.key].map { $0.usage.takeCloseRequest() } ?? false)
        }
        guard changed else { return }
        metrics.connectionEvent(endpoint: label, event)
        logger.debug("APNs connection replaced", metadata: ["apns.connection": String(connection.id)])
        if closeNow { connection.connection.close() }
        ensureConnections()
        dispatch()
    }
}
