package import Runtime
internal import TLS
internal import HTTP2
import Synchronization
package import Telemetry
internal import Crypto
internal import Foundation

/// Sends pushes to APNs over pools of HTTP/2 connections: one pool per endpoint (production, sandbox, or one
/// custom endpoint for both), each with ``APNsClientConfiguration/connectionsPerPool`` connections.
///
/// Every push is answered exactly once: with APNs' answer, or with a transport failure (`Timeout`,
/// `ConnectionLost`, `NotProcessed`; disposition `retryLater`) within ``APNsClientConfiguration/requestTimeout``.
/// Streams APNs did not process (GOAWAY, REFUSED_STREAM) are re-sent transparently; an `ExpiredProviderToken`
/// answer re-mints the shared provider token and re-sends the push once with it.
///
/// - Important: thread-safe. Completions run on an event-loop thread: keep them short.
package final class APNsClient: Sendable {
    package let configuration: APNsClientConfiguration
    package let metrics: APNsClientMetrics
    /// The shared provider-token cache (token auth), for inspection.
    let tokenCache: APNsTokenCache?
    let group: EventLoopGroup
    let ownsGroup: Bool
    let pools: [APNsEndpoint: APNsConnectionPool]
    /// The pools of ``APNsEnvironment/production`` and ``APNsEnvironment/sandbox`` (the same one for a custom
    /// endpoint), looked up once instead of hashing the endpoint per push.
    private let productionPool: APNsConnectionPool?
    private let sandboxPool: APNsConnectionPool?
    private let isShutdown = Atomic<Bool>(false)
    /// ``APNsClientConfiguration/requestTimeout`` in nanoseconds, converted once rather than per push.
    private let requestTimeoutNanoseconds: UInt64

    /// The client's event loops, for the delayed work of the layers above (the worker's timers).
    package var timers: any JobScheduler { group }

    /// - Parameters:
    ///   - configuration: endpoints, credentials, pool size, timers.
    ///   - metrics: registry for the `callpush_apns_*` series. Default: a private registry.
    ///   - group: event loops to run connections on. Default: a new group of ``APNsClientConfiguration/eventLoops``
    ///     threads, shut down by ``shutdown()``.
    ///   - logger: debug/info logs; device tokens and JWTs are never logged.
    ///   - metricLabels: labels added to every `callpush_apns_*` series of this client (e.g. `credential`, when
    ///     several clients share `metrics`). Default: none.
    /// - Throws: ``APNsClientError`` when the credentials cannot be loaded or TLS cannot be set up.
    package init(
        configuration: APNsClientConfiguration,
        metrics: MetricsRegistry = MetricsRegistry(),
        group: EventLoopGroup? = nil,
        logger: Logger = .disabled,
        metricLabels: [String: String] = [:]
    ) throws(APNsClientError) {
        self.configuration = configuration
        self.metrics = APNsClientMetrics(registry: metrics, constantLabels: metricLabels)
        var certificateFile: String?
        var privateKeyFile: String?
        var identity: (certificateChain: String, privateKey: String)?
        let tokens: APNsTokenProvider?
        switch configuration.credentials.kind {
        case .token(let credentials):
            do {
                let signer = try credentials.makeSigner()
                let cache = APNsTokenCache(signer: signer, configuration: configuration.tokenCache,
                                           clock: configuration.clock)
                tokens = APNsTokenProvider(cache: cache, clock: configuration.clock,
                                           refreshes: self.metrics.jwtRefreshCounter)
                tokenCache = cache
            } catch {
                let source = if case .file(let path) = credentials.key { " \(path)" } else { "" }
                throw APNsClientError(.credentials, "cannot load the provider-token key\(source) (the .p8 file from Apple's developer account, PEM with a P-256 key): \(error)")
            }
        case .certificate(let credentials):
            tokens = nil
            tokenCache = nil
            switch credentials.source {
            case .pemFiles(let certificatePath, let privateKeyPath):
                certificateFile = certificatePath
                privateKeyFile = privateKeyPath
            case .pkcs12:
                do {
                    // Decrypted in memory and handed to OpenSSL from there: the key never reaches a file.
                    let pem = try credentials.loadPEM()
                    identity = (pem.certificatePEM + "\n" + pem.chainPEM, pem.privateKeyPEM)
                } catch {
                    throw APNsClientError(.credentials, "cannot load the PKCS12 certificate: \(error)")
                }
            }
        }
        if let group {
            self.group = group
            ownsGroup = false
        } else {
            do throws(SocketError) {
                self.group = try EventLoopGroup(numberOfThreads: configuration.eventLoops)
            } catch {
                throw APNsClientError(.transport, "cannot start event loops: \(HTTP2Error(error))")
            }
            ownsGroup = true
        }
        var endpoints: [APNsEndpoint] = []
        if let custom = configuration.customEndpoint {
            endpoints = [custom]
        } else {
            endpoints = [configuration.productionEndpoint, configuration.sandboxEndpoint]
        }
        var pools: [APNsEndpoint: APNsConnectionPool] = [:]
        for endpoint in endpoints where pools[endpoint] == nil {
            let tls: TLSContext
            do throws(TLSError) {
                var settings = TLSClientConfiguration(
                    caFile: endpoint.caFile, certificateFile: certificateFile, privateKeyFile: privateKeyFile,
                    verifyPeer: configuration.verifyPeer)
                settings.clientIdentityPEM = identity
                tls = try TLSContext(client: settings)
            } catch {
                if ownsGroup { self.group.shutdown() }
                throw APNsClientError(.transport, "cannot set up TLS for \(endpoint): \(HTTP2Error(error))")
            }
            pools[endpoint] = APNsConnectionPool(
                endpoint: endpoint, configuration: configuration, tls: tls, group: self.group, tokens: tokens,
                metrics: self.metrics, logger: logger)
        }
        self.pools = pools
        requestTimeoutNanoseconds = UInt64(max(0, configuration.requestTimeout.nanoseconds))
        productionPool = pools[configuration.endpoint(for: .production)]
        sandboxPool = pools[configuration.endpoint(for: .sandbox)]
    }

    private func pool(for environment: APNsEnvironment) -> APNsConnectionPool? {
        environment == .production ? productionPool : sandboxPool
    }

    // MARK: - Connecting and sending

    /// Opens the connections of `environments`' pools now (one pool for both with a custom endpoint) instead of at
    /// each pool's first push, and keeps them open from then on: the first push after a start or a scale-out then
    /// does not wait for TCP and TLS handshakes. Failed connects are retried after the reconnect backoff and counted
    /// (`callpush_apns_connection_events_total{event="failed"}`).
    package func connect(_ environments: [APNsEnvironment] = APNsEnvironment.allCases) {
        guard !isShutdown.load(ordering: .relaxed) else { return }
        var started: [ObjectIdentifier] = []
        for case let pool? in environments.map(pool(for:)) where !started.contains(ObjectIdentifier(pool)) {
            started.append(ObjectIdentifier(pool))
            pool.start()
        }
    }

    /// Sends `request` to the endpoint for `environment`. `completion` runs exactly once, possibly on an event-loop
    /// thread, with APNs' answer or a transport failure.
    package func send(
        _ request: APNsRequest,
        environment: APNsEnvironment = .production,
        completion: @escaping @Sendable (APNsResult) -> Void
    ) {
        send([APNsClosurePush(request, environment: environment, completion: completion)])
    }

    /// Sends several pushes, each as ``send(_:environment:completion:)`` does, with one hand-off per pool (and so
    /// per connection) instead of one per push. Pushes to one pool keep their order.
    package func send(_ pushes: [APNsPush]) {
        for push in pushes { start(push, route: nil) }
        send(started: pushes)
    }

    /// `push` goes out now on this client (an ``APNsAppRouter`` admitted it on `route`): its deadline starts.
    func start(_ push: APNsPush, route: APNsAppRouter.Route?) {
        push.start(route: route, timeoutNanoseconds: requestTimeoutNanoseconds)
    }

    /// Queues `pushes` on their environments' pools, runs of one pool together; after ``shutdown()`` (or for an
    /// environment without a pool) each is answered `NotProcessed` at once.
    func send(started pushes: [APNsPush]) {
        guard !pushes.isEmpty else { return }
        let isShutdown = isShutdown.load(ordering: .relaxed)
        var runPool: APNsConnectionPool?
        var run: [APNsPush] = []
        run.reserveCapacity(pushes.count)
        for push in pushes {
            guard !isShutdown, let pool = pool(for: push.environment) else {
                let result = APNsResult.transportFailure(reason: .notProcessed, id: push.request.id)
                metrics.recordAnswer(result, seconds: 0)
                push.answer(result)
                continue
            }
            if let runPool, runPool !== pool {
                runPool.send(batch: run)
                run.removeAll(keepingCapacity: true)
            }
            runPool = pool
            run.append(push)
        }
        runPool?.send(batch: run)
    }

    /// Async form of ``send(_:environment:completion:)``.
    package func send(_ request: APNsRequest, environment: APNsEnvironment = .production) async -> APNsResult {
        await withCheckedContinuation { continuation in
            send(request, environment: environment) { continuation.resume(returning: $0) }
        }
    }

    // MARK: - Observation

    /// Per endpoint: open connections, requests on the wire, queued requests, and each slot's stream limit.
    package func poolStatus(for environment: APNsEnvironment) -> APNsPoolStatus {
        let endpoint = configuration.endpoint(for: environment)
        guard let pool = pools[endpoint] else {
            return APNsPoolStatus(
                endpoint: endpoint, openConnections: 0, inFlight: 0, queued: 0, streamLimits: [], lastConnectError: nil)
        }
        let snapshot = pool.snapshot()
        return APNsPoolStatus(endpoint: endpoint, openConnections: snapshot.open, inFlight: snapshot.inFlight,
                              queued: snapshot.pending, streamLimits: snapshot.limits,
                              lastConnectError: snapshot.lastConnectError)
    }

    // MARK: - Shutdown

    /// Answers queued pushes with `NotProcessed`, closes every connection (in-flight pushes end with
    /// `ConnectionLost`), and stops the event loops the client created. Must not run on an event-loop thread.
    /// Idempotent.
    package func shutdown() {
        if isShutdown.exchange(true, ordering: .acquiringAndReleasing) { return }
        for pool in pools.values { pool.shutdown() }
        if ownsGroup { group.shutdown() }
    }
}

