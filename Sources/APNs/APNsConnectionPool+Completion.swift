import Runtime
import HTTP2
import Synchronization

extension APNsConnectionPool {
    /// Schedules one ``dispatch()`` on `loop` unless one is scheduled already: it runs later in the loop's current turn
    /// (before the turn's writes), so every stream freed in the turn is refilled by one dispatch.
    func scheduleDispatch(on loop: EventLoop) {
        guard !dispatchScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.execute { [self] in
            dispatchScheduled.store(false, ordering: .releasing)
            dispatch()
        }
    }

    /// Handles the HTTP/2 outcome of one stream (on the connection's loop thread): classifies it, re-sends when that
    /// is safe and useful, replaces the connection when the answer says so, and otherwise answers the push.
    func completed(
        _ pending: APNsPush,
        on connection: APNsPooledConnection,
        token: APNsProviderToken?,
        result: Result<HTTP2Response, HTTP2Error>
    ) {
        let id = pending.request.id
        switch result {
        case .success(let response):
            // The answer, parsed once; its reason says whether the provider token passed (only 403s and the
            // TooManyProviderTokenUpdates 429 are answers about the token).
            let answer = APNsResult(response: response)
            let reason = answer.apnsReason
            streamEnded(on: connection, answered: true,
                        authenticated: answer.status != 403 && reason != .tooManyProviderTokenUpdates)
            if reason == .expiredProviderToken, let tokens, let token, !pending.authRetried {
                retire(connection, event: .replaced)
                if tokens.invalidate(token) != .tooRecent {
                    pending.authRetried = true
                    requeue(pending, otherwise: answer)
                    return
                }
                finish(pending, answer)
                return
            }
            if reason == .tooManyProviderTokenUpdates, tokens != nil, !pending.authRetried {
                // This connection saw tokens change too often; a fresh connection starts a new count.
                retire(connection, event: .replaced)
                pending.authRetried = true
                requeue(pending, otherwise: answer)
                return
            }
            if answer.needsNewConnection { retire(connection, event: .replaced) }
            finish(pending, answer)
        case .failure(let error):
            streamEnded(on: connection, answered: false, authenticated: false)
            if error.isRetriable && pending.resends < configuration.maximumTransparentResends {
                pending.resends += 1
                requeue(pending, otherwise: .transportFailure(reason: .notProcessed, id: id))
                return
            }
            switch error.code {
            case .timeout:
                retire(connection, event: .replaced)
                finish(pending, .transportFailure(reason: .timeout, id: id))
            case .notProcessed, .shutdown:
                finish(pending, .transportFailure(reason: .notProcessed, id: id))
            case .streamReset where error.isRetriable:
                finish(pending, .transportFailure(reason: .notProcessed, id: id))
            default:
                logger.debug("APNs stream lost", metadata: ["error": error.description])
                if connection.connection.isAcceptingRequests { retire(connection, event: .replaced) }
                finish(pending, .transportFailure(reason: .connectionLost, id: id))
            }
        }
    }

    /// Accounts for the stream `connection` freed: its usage (which may retire it) and, when pushes wait, one dispatch
    /// in this loop turn rather than at the next send or maintenance tick (the answers of one turn share it).
    private func streamEnded(on connection: APNsPooledConnection, answered: Bool, authenticated: Bool) {
        let (closeNow, queued) = state.withLock { state in
            (state.open[connection.key].map { $0.usage.finishOne(answered: answered, authenticated: authenticated) } ?? false,
             !state.pending.isEmpty)
        }
        if closeNow { connection.connection.close() }
        if queued { scheduleDispatch(on: connection.connection.loop) }
    }
}
