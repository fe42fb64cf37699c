import HTTP2

extension APNsConnectionPool {
    /// Handles the HTTP/2 outcome of one stream (on the connection's loop thread): classifies it, re-sends when that
    /// is safe and useful, replaces the connection when the answer says so, and otherwise answers the push.
    func completed(
        _ pending: APNsPendingRequest,
        on connection: APNsPooledConnection,
        token: APNsProviderToken?,
        result: Result<HTTP2Response, HTTP2Error>
    ) {
        var authenticatedNow = false
        if case .success(let response) = result, response.status != 403, response.status != 429 || !isTokenThrottle(response) {
            authenticatedNow = true
        }
        let closeNow = state.withLock { state -> Bool in
            connection.inFlight -= 1
            if authenticatedNow { connection.authenticated = true }
            if connection.retiring, connection.inFlight == 0, !connection.closeRequested {
                connection.closeRequested = true
                return true
            }
            return false
        }
        if closeNow { connection.connection.close() }
        let apnsID = pending.request.apnsID

        switch result {
        case .success(let response):
            let answer = APNsResult(
                status: response.status, headers: response.headers.map { ($0.name, $0.value) }, body: response.body)
            let reason = answer.apnsReason
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
            if error.isRetriable && pending.resends < configuration.maximumTransparentResends {
                pending.resends += 1
                requeue(pending, otherwise: .transportFailure(reason: .notProcessed, apnsID: apnsID))
                return
            }
            switch error.code {
            case .timeout:
                retire(connection, event: .replaced)
                finish(pending, .transportFailure(reason: .timeout, apnsID: apnsID))
            case .notProcessed, .shutdown:
                finish(pending, .transportFailure(reason: .notProcessed, apnsID: apnsID))
            case .streamReset where error.isRetriable:
                finish(pending, .transportFailure(reason: .notProcessed, apnsID: apnsID))
            default:
                logger.debug("APNs stream lost", metadata: ["error": error.description])
                if connection.connection.isAcceptingRequests { retire(connection, event: .replaced) }
                finish(pending, .transportFailure(reason: .connectionLost, apnsID: apnsID))
            }
        }
    }

    private func isTokenThrottle(_ response: HTTP2Response) -> Bool {
        // Only TooManyProviderTokenUpdates is an auth answer among 429s; TooManyRequests means the token passed.
        let text = String(decoding: response.body, as: UTF8.self)
        return text.contains("TooManyProviderTokenUpdates")
    }
}
