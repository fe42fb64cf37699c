import Dispatch
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
                state.consecutiveFailures = 0
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
            let delay = state.withLock { state -> Duration in
                state.connecting = false
                state.consecutiveFailures += 1
                state.lastConnectError = error.description
                let delay = configuration.reconnectDelay(afterFailures: state.consecutiveFailures)
                state.nextConnectAttempt = .after(delay)
                return delay
            }
            metrics.connectionEvent(endpoint: label, .failed)
            logger.info("APNs connect failed", metadata: ["error": error.description, "retry.in": "\(delay)"])
            // The maintenance timer retries once the backoff has passed (when pushes wait, or always after `start()`).
        }
    }

    /// Adds the change in this pool's open connections to the (possibly shared) connections gauge.
    func connectionsGaugeChanged() {
        let change = state.withLock { $0.countChange($0.open.count, in: \.countedConnections) }
        if change != 0 { connectionsGauge.increment(by: Double(change)) }
    }

    // MARK: - Connection state

    private func stateChanged(_ connection: HTTP2ClientConnection, _ newState: HTTP2ConnectionState) {
        let key = ObjectIdentifier(connection)
        switch newState {
        case .connecting, .ready:
            return
        case .goingAway:
            // GOAWAY (or a local close that started draining): stop using it, open a replacement.
            let moved = state.withLock { $0.retire(key) }
            if moved {
                metrics.connectionEvent(endpoint: label, .goaway)
                logger.debug("APNs connection got GOAWAY")
            }
            ensureConnections()
            dispatch()
        case .closed:
            let unexpected = state.withLock { state -> Bool? in
                guard state.open[key] != nil else { return nil }
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
