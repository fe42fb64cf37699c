package import APNs
internal import Crypto
internal import Foundation
package import Runtime
internal import TLS
internal import HTTP2
internal import HTTP2Server
import Synchronization
package import Telemetry

/// An APNs-faithful HTTP/2-over-TLS server (ALPN h2) for tests, the demo and load tests.
///
/// Each request goes through ``APNsMockValidator/handle(_:connection:)``; the decision is carried out without
/// blocking the event loop: answer (after its latency), stall (never answer), drop the connection, and GOAWAY after
/// N streams. Token-auth connections start with a stream limit of 1 and get
/// ``APNsMockServerConfiguration/maxConcurrentStreams`` after their first valid provider token, as APNs does (on a
/// server that also takes token auth, a connection with a verified client certificate gets it after its first
/// request).
///
/// - Important: thread-safe. Change faults while it runs through ``faults``; read what happened from
///   ``recorder`` and ``connectionStats()``.
package final class APNsMockServer: Sendable {
    package let configuration: APNsMockServerConfiguration
    let validator: APNsMockValidator
    /// The bound port.
    package let port: Int
    /// PEM certificate the server presents: trust it as a CA file in clients.
    package let certificatePath: String
    /// PEM private key of the server certificate.
    package let privateKeyPath: String
    let server: HTTP2Server
    let core: Core
    let group: EventLoopGroup
    let ownsGroup: Bool
    let generatedDirectory: String?

    /// The live fault plan (see ``APNsMockFaultInjector/update(_:)``).
    package var faults: APNsMockFaultInjector { validator.faults }
    /// Every handled request and the counts by outcome.
    package var recorder: APNsMockRecorder { validator.recorder }
    /// An endpoint for clients: `127.0.0.1:<port>` trusting ``certificatePath``.
    package var endpoint: APNsEndpoint { .custom(host: configuration.host, port: port, caFile: certificatePath) }

    /// Starts listening.
    /// - Parameters:
    ///   - group: loops to run on. Default: a new group of ``APNsMockServerConfiguration/eventLoops`` threads,
    ///     stopped by ``stop()``.
    /// - Throws: ``APNsMockServerError``.
    package init(
        configuration: APNsMockServerConfiguration = APNsMockServerConfiguration(),
        group: EventLoopGroup? = nil,
        logger: Logger = .disabled
    ) throws(APNsMockServerError) {
        self.configuration = configuration
        validator = APNsMockValidator(
            configuration: configuration.apns,
            faults: APNsMockFaultInjector(faults: configuration.faults, seed: configuration.seed),
            recorder: APNsMockRecorder(capacity: configuration.recorderCapacity))
        if let certificateFile = configuration.certificateFile, let privateKeyFile = configuration.privateKeyFile {
            certificatePath = certificateFile
            privateKeyPath = privateKeyFile
            generatedDirectory = nil
        } else {
            var directory = configuration.certificateDirectory
            var created: String?
            if directory == nil {
                let path = NSTemporaryDirectory() + "callpush-apns-mock-" + UUID().uuidString
                do {
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                } catch {
                    throw APNsMockServerError(.certificate, "cannot create \(path): \(error)")
                }
                directory = path
                created = path
            }
            do {
                let certificate = try SelfSignedCertificate.generate()
                let files = try certificate.write(toDirectory: directory!)
                certificatePath = files.certificatePath
                privateKeyPath = files.privateKeyPath
            } catch {
                throw APNsMockServerError(.certificate, "cannot generate the server certificate: \(error)")
            }
            generatedDirectory = created
        }
        let tls: TLSContext
        do throws(TLSError) {
            var settings = TLSServerConfiguration(
                certificateFile: certificatePath, privateKeyFile: privateKeyPath,
                clientCAFile: configuration.clientCAFile)
            settings.clientCertificateOptional = configuration.clientCertificateOptional
            tls = try TLSContext(server: settings)
        } catch {
            throw APNsMockServerError(.tls, "\(HTTP2Error(error))")
        }
        if let group {
            self.group = group
            ownsGroup = false
        } else {
            do throws(SocketError) {
                self.group = try EventLoopGroup(numberOfThreads: configuration.eventLoops)
            } catch {
                throw APNsMockServerError(.eventLoop, "\(HTTP2Error(error))")
            }
            ownsGroup = true
        }
        let core = Core(configuration: configuration, validator: validator)
        self.core = core
        let http2 = HTTP2ServerConfiguration(
            host: configuration.host, port: configuration.port,
            maxConcurrentStreams: configuration.usesProviderTokens
                ? configuration.unauthenticatedMaxConcurrentStreams : configuration.maxConcurrentStreams)
        do {
            server = try HTTP2Server(configuration: http2, tls: tls, group: self.group, logger: logger) {
                request, responder in core.handle(request, responder)
            }
        } catch {
            if ownsGroup { self.group.shutdown() }
            throw APNsMockServerError(.bind, "\(error)")
        }
        port = server.port
    }

    // MARK: - Run-time control

    /// Replaces the fault plan.
    func setFaults(_ faults: APNsMockFaults) { validator.faults.faults = faults }

    /// Changes SETTINGS_MAX_CONCURRENT_STREAMS on every live connection (and for new ones).
    package func setMaxConcurrentStreams(_ value: Int) { server.setMaxConcurrentStreams(value) }

    /// Sends GOAWAY on every live connection, with APNs-style JSON debug data.
    package func sendGoAway(reason: APNsReason = .shutdown) {
        server.sendGoAway(debugData: #"{"reason":""# + reason.rawValue + #""}"#)
    }

    /// Drops every live connection without GOAWAY.
    package func dropAllConnections() { server.dropAllConnections() }

    /// Connections accepted so far.
    package var acceptedConnections: Int { core.state.withLock { $0.accepted } }

    /// Per-connection statistics, by connection id.
    func connectionStats() -> [APNsMockConnectionStats] {
        core.state.withLock { state in
            state.connections.map { id, tracked in
                let counters = tracked.counters
                return APNsMockConnectionStats(
                    id: id, requests: counters.requests, maxConcurrentStreams: counters.maxActive,
                    maxConcurrentStreamsBeforeAuthentication: counters.maxActiveBeforeAuthentication,
                    authenticated: counters.raised, refusedAfterGoAway: counters.refused)
            }.sorted { $0.id < $1.id }
        }
    }

    /// Stops accepting, drops every connection, stops the loops it created, removes a generated certificate.
    /// Must not run on an event-loop thread.
    package func stop() {
        server.stop()
        if ownsGroup { group.shutdown() }
        if let generatedDirectory { try? FileManager.default.removeItem(atPath: generatedDirectory) }
    }

    // MARK: - Request handling

    /// The handler side: per-connection state and the carrying-out of decisions.
    final class Core: Sendable {
        /// A connection as the handler knows it from its first request on; never changes.
        final class Peer: Sendable {
            let id: Int
            let apns: APNsMockConnectionState
            let connection: HTTP2ServerConnection

            init(id: Int, connection: HTTP2ServerConnection) {
                self.id = id
                self.connection = connection
                apns = APNsMockConnectionState(id: id, clientCertificate: connection.clientCertificate)
            }
        }

        /// A connection's counters, in ``state``.
        struct Counters {
            var raised = false
            var requests = 0
            var active = 0
            var maxActive = 0
            var maxActiveBeforeAuthentication = 0
            /// Set when this connection decided to send GOAWAY: later streams above it are refused, not processed.
            var goAwayLastStreamID: Int32?
            var refused = 0
        }

        struct Tracked {
            let peer: Peer
            var counters = Counters()
        }

        struct State {
            /// By connection id.
            var connections: [Int: Tracked] = [:]
            var accepted = 0

            /// Changes the counters of connection `id`, if it is still tracked.
            mutating func update(_ id: Int, _ change: (inout Counters) -> Void) {
                guard let index = connections.index(forKey: id) else { return }
                change(&connections.values[index].counters)
            }
        }

        let configuration: APNsMockServerConfiguration
        let validator: APNsMockValidator
        let state = Mutex(State())

        init(configuration: APNsMockServerConfiguration, validator: APNsMockValidator) {
            self.configuration = configuration
            self.validator = validator
        }

        func handle(_ request: HTTP2ServerRequest, _ responder: HTTP2ServerResponder) {
            guard let (peer, authenticated) = admit(request) else {
                responder.reset(errorCode: 0x7)  // REFUSED_STREAM: safe for the client to retry elsewhere
                return
            }
            let decision = validator.handle(APNsMockRequest(fields: request.fields, body: request.body), connection: peer.apns)
            if !authenticated { authenticate(peer) }
            // Streams answered on this turn of the loop never count as active; delayed, stalled and dropped ones do.
            var answersNow = decision.delay == .zero
            if case .respond = decision.action {} else { answersNow = false }
            let streamID = request.streamID
            if !answersNow || decision.sendGoAwayAfter {
                state.withLock { state in
                    state.update(peer.id) { counters in
                        if !answersNow { counters.active += 1 }
                        if decision.sendGoAwayAfter { counters.goAwayLastStreamID = streamID }
                    }
                }
            }
            if decision.delay > .zero {
                request.connection.loop.execute(after: decision.delay) { [self] in
                    carryOut(decision, streamID: streamID, peer: peer, responder: responder, counted: true)
                }
            } else {
                carryOut(decision, streamID: streamID, peer: peer, responder: responder, counted: !answersNow)
            }
        }

        /// Finds (or registers) the connection and counts the stream; nil when the stream is above the GOAWAY this
        /// connection decided to send. Also returns whether the connection is already authenticated.
        private func admit(_ request: HTTP2ServerRequest) -> (Peer, Bool)? {
            let connection = request.connection
            let streamID = request.streamID
            return state.withLock { state -> (Peer, Bool)? in
                let id = connection.id
                let index: Dictionary<Int, Tracked>.Index
                if let existing = state.connections.index(forKey: id) {
                    index = existing
                } else {
                    state.accepted += 1
                    if state.connections.count >= 256 {
                        state.connections = state.connections.filter { !$0.value.peer.connection.isClosed }
                    }
                    state.connections[id] = Tracked(peer: Peer(id: id, connection: connection))
                    index = state.connections.index(forKey: id)!
                }
                let peer = state.connections.values[index].peer
                return Self.count(streamID, in: &state.connections.values[index].counters).map { (peer, $0) }
            }
        }

        /// Counts a new stream: nil when it is above the connection's GOAWAY, else whether the connection is
        /// already authenticated.
        private static func count(_ streamID: Int32, in counters: inout Counters) -> Bool? {
            if let last = counters.goAwayLastStreamID, streamID > last {
                // HTTP2 sends GOAWAY at the end of the loop turn, after handing over every stream of the same read;
                // streams above the GOAWAY's last-stream-id were never processed, so refuse them.
                counters.refused += 1
                return nil
            }
            counters.requests += 1
            counters.maxActive = max(counters.maxActive, counters.active + 1)
            if !counters.raised {
                counters.maxActiveBeforeAuthentication = max(counters.maxActiveBeforeAuthentication, counters.active + 1)
            }
            return counters.raised
        }

        /// After a connection's first valid provider token (or its first request without token auth, or on a
        /// connection with a verified client certificate), raises its stream limit as APNs does.
        private func authenticate(_ peer: Peer) {
            if configuration.usesProviderTokens, peer.apns.boundKeyID == nil, peer.apns.clientCertificate == nil { return }
            let first = state.withLock { state -> Bool in
                var first = false
                state.update(peer.id) { counters in
                    first = !counters.raised
                    counters.raised = true
                }
                return first
            }
            if first, configuration.usesProviderTokens {
                peer.connection.setMaxConcurrentStreams(configuration.maxConcurrentStreams)
            }
        }

        private func carryOut(
            _ decision: APNsMockDecision, streamID: Int32, peer: Peer, responder: HTTP2ServerResponder, counted: Bool
        ) {
            switch decision.action {
            case .respond(let response):
                if counted { state.withLock { $0.update(peer.id) { $0.active -= 1 } } }
                responder.respond(status: response.status, body: response.body) { response.writeHeaders($0) }
            case .stall:
                break
            case .dropConnection:
                peer.connection.drop()
            }
            if decision.sendGoAwayAfter {
                peer.connection.sendGoAway(
                    lastStreamID: streamID, errorCode: 0,
                    debugData: String(decoding: decision.goAwayDebugData, as: UTF8.self))
            }
        }
    }
}
