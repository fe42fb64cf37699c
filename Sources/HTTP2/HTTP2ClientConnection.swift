@preconcurrency import Glibc
internal import CNGHTTP2
package import Runtime
package import TLS
import Synchronization
package import Telemetry

/// One HTTP/2-over-TLS client connection, confined to one `EventLoop`.
///
/// Submit requests from any thread with `submit(_:deadline:completion:)`; completions run on the loop thread (keep
/// them cheap, hop elsewhere for heavy work). When the peer's stream limit is reached, requests wait in a local
/// FIFO queue. Every request is answered exactly once: with a response, or with an `HTTP2Error` (check
/// `isRetriable`).
///
/// - Important: `@unchecked Sendable`: public methods are thread-safe (they hop to the loop with `execute`, or read
///   atomics); all other state is touched only on the loop thread. The connection keeps itself alive while open;
///   call `close()` when done.
package final class HTTP2ClientConnection: @unchecked Sendable {
    package typealias Completion = @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void
    package typealias StateHandler = @Sendable (HTTP2ClientConnection, HTTP2ConnectionState) -> Void

    /// The loop this connection lives on.
    package let loop: EventLoop
    package let configuration: HTTP2ClientConfiguration
    let host: String
    let port: Int
    let authority: String
    var logger: Logger

    // Atomics readable from any thread.
    private let stateValue = Atomic<Int>(HTTP2ConnectionState.connecting.rawValue)
    private let limitValue = Atomic<Int>(0)
    private let activeValue = Atomic<Int>(0)
    private let queuedValue = Atomic<Int>(0)
    private let lastStreamValue = Atomic<Int32>(Int32.max)
    private let remoteAddressValue = Mutex<String?>(nil)
    /// Cross-thread submissions (see `SubmissionInbox`).
    private let inbox = SubmissionInbox()

    // Loop-confined state.
    var tls: TLSContext?
    /// Resolved addresses in the order to try them; `nextCandidate` is the first untried one.
    var candidateAddresses: [SocketAddress] = []
    var nextCandidate = 0
    /// `address: reason` of every failed TCP connect, reported when all fail.
    var connectFailures: [String] = []
    var transport: TLSTransport?
    var session: OpaquePointer?
    var streams = ActiveStreams()
    var queue = FIFOQueue<HTTP2ClientStream>()
    var encoder = NGHTTP2RequestEncoder()
    /// nghttp2's memory; outlives `session` (deleted in `finishClose`, or never created).
    let allocator = NGHTTP2Allocator()
    var goAwayReceived = false
    var receivedLastStreamID: Int32 = Int32.max
    var closeError: HTTP2Error?
    var readyCallback: ((Result<HTTP2ClientConnection, HTTP2Error>) -> Void)?
    var stateHandler: StateHandler?
    var connectTimer: EventLoopTimer?
    var sweepTimer: EventLoopTimer?
    /// No queued or in-flight stream has a deadline before this (uptime ns; `UInt64.max`: none has one). Lowered by
    /// every stream queued, raised only by a sweep that scanned them all: it may name a stream already answered, and
    /// then the sweep at that time scans and finds the true one.
    var earliestDeadline = UInt64.max
    var pingTimer: EventLoopTimer?
    var pings: [UInt64: PingWaiter] = [:]
    var nextPingID: UInt64 = 1
    var lastReadTime: UInt64 = 0
    var localState: HTTP2ConnectionState = .connecting

    init(loop: EventLoop, host: String, port: Int, configuration: HTTP2ClientConfiguration, logger: Logger) {
        self.loop = loop
        self.host = host
        self.port = port
        self.configuration = configuration
        self.authority = port == 443 ? host : "\(host):\(port)"
        self.logger = logger
    }

    // MARK: - Connect

    /// Opens a connection and calls `completion` (on the loop thread) once the peer's first SETTINGS arrived, or
    /// with an error (`connectFailed`, `tlsHandshakeFailed`, `certificateVerifyFailed`, `hostnameMismatch`,
    /// `alpnMismatch`, `timeout`). Name resolution (`getaddrinfo`) runs on the calling thread.
    ///
    /// `host` (or each entry of `addresses`) is resolved to every IPv4 and IPv6 address it has. The TCP connect tries
    /// them in turn, starting at `addressRotation` (modulo their count), and moves on to the next when one is refused
    /// or unreachable; `connectFailed` means every address failed, and its reason lists each. The connect timeout
    /// covers all attempts together.
    /// - Parameters:
    ///   - addresses: names or IP literals to connect to instead of `host` (which still names the server for SNI,
    ///     certificate verification and `:authority`). Default: nil, resolve `host`.
    ///   - addressRotation: which resolved address to try first; a pool passes a counter to spread its connections
    ///     over all of a host's addresses. Default: 0.
    ///   - stateHandler: called on the loop thread at every state change (`ready`, `goingAway`, `closed`).
    package static func connect(
        host: String,
        port: Int,
        tls: TLSContext,
        configuration: HTTP2ClientConfiguration = HTTP2ClientConfiguration(),
        on loop: EventLoop,
        logger: Logger = .disabled,
        addresses: [String]? = nil,
        addressRotation: Int = 0,
        stateHandler: StateHandler? = nil,
        completion: @escaping @Sendable (Result<HTTP2ClientConnection, HTTP2Error>) -> Void
    ) {
        let connection = HTTP2ClientConnection(
            loop: loop, host: host, port: port, configuration: configuration, logger: logger)
        var resolved: [SocketAddress] = []
        do {
            for name in addresses ?? [host] {
                resolved += try Socket.resolveAll(host: name, port: port)
            }
        } catch {
            let error = HTTP2Error(error)
            loop.execute { completion(.failure(error)) }
            return
        }
        guard !resolved.isEmpty else {
            loop.execute { completion(.failure(HTTP2Error(.connectFailed, reason: "no address to connect to"))) }
            return
        }
        let first = ((addressRotation % resolved.count) + resolved.count) % resolved.count
        let addresses = Array(resolved[first...] + resolved[..<first])
        loop.execute {
            connection.start(addresses: addresses, tls: tls, stateHandler: stateHandler, completion: completion)
        }
    }

    /// Async form of `connect(…completion:)`.
    package static func connect(
        host: String,
        port: Int,
        tls: TLSContext,
        configuration: HTTP2ClientConfiguration = HTTP2ClientConfiguration(),
        on loop: EventLoop,
        logger: Logger = .disabled,
        addresses: [String]? = nil,
        addressRotation: Int = 0,
        stateHandler: StateHandler? = nil
    ) async throws(HTTP2Error) -> HTTP2ClientConnection {
        let result = await withCheckedContinuation { continuation in
            connect(host: host, port: port, tls: tls, configuration: configuration, on: loop, logger: logger,
                    addresses: addresses, addressRotation: addressRotation, stateHandler: stateHandler) {
                continuation.resume(returning: $0)
            }
        }
        return try result.get()
    }

    private func start(
        addresses: [SocketAddress],
        tls: TLSContext,
        stateHandler: StateHandler?,
        completion: @escaping (Result<HTTP2ClientConnection, HTTP2Error>) -> Void
    ) {
        self.stateHandler = stateHandler
        self.readyCallback = completion
        self.tls = tls
        candidateAddresses = addresses
        connectTimer = loop.schedule(at: .after(configuration.connectTimeout)) { [self] in
            let timeout = HTTP2Error(.timeout, reason: "connect timed out")
            if let transport { closeTransport(transport, for: timeout) } else { finishClose(timeout) }
        }
        connectNextAddress()
    }

    /// Starts the TCP connect to the next untried address, skipping those that fail at once; when none is left,
    /// closes with `connectFailed` listing every attempt (loop thread).
    func connectNextAddress() {
        guard let tls else { return }
        while nextCandidate < candidateAddresses.count {
            let address = candidateAddresses[nextCandidate]
            nextCandidate += 1
            remoteAddressValue.withLock { $0 = address.description }
            let fd: Int32
            do {
                fd = try Socket.connect(to: address)
            } catch {
                connectFailures.append("\(address): \(error.reason)")
                continue
            }
            let transport: TLSTransport
            do {
                transport = try TLSTransport(loop: loop, connectingFD: fd, context: tls, host: host)
            } catch {
                Glibc.close(fd)
                finishClose(HTTP2Error(error))
                return
            }
            self.transport = transport
            transport.delegate = self
            transport.start()
            return
        }
        finishClose(HTTP2Error(.connectFailed, reason: connectFailures.joined(separator: "; ")))
    }

    /// Whether a transport that closed with `error` should give way to the next address: its TCP connect failed
    /// before any byte of TLS, and an address is left.
    func shouldTryNextAddress(after error: HTTP2Error) -> Bool {
        guard error.code == .connectFailed, session == nil, localState == .connecting, closeError == nil else {
            return false
        }
        connectFailures.append("\(remoteAddress ?? "?"): \(error.reason)")
        return nextCandidate < candidateAddresses.count
    }

    // MARK: - Observation (any thread)

    /// The current state.
    package var state: HTTP2ConnectionState {
        HTTP2ConnectionState(rawValue: stateValue.load(ordering: .relaxed)) ?? .closed
    }
    /// The effective concurrent-stream limit: `min(local cap, peer SETTINGS_MAX_CONCURRENT_STREAMS)`; 0 before ready.
    package var maxConcurrentStreams: Int { limitValue.load(ordering: .relaxed) }
    /// Streams open on the wire now.
    var activeStreams: Int { activeValue.load(ordering: .relaxed) }
    /// Requests waiting locally for a free stream.
    var queuedRequests: Int { queuedValue.load(ordering: .relaxed) }
    /// GOAWAY's last-stream-id once one was received, else `nil`.
    var goAwayLastStreamID: Int32? {
        let value = lastStreamValue.load(ordering: .relaxed)
        return value == Int32.max ? nil : value
    }
    /// The address connected to (or being tried), e.g. `17.188.143.34:443` or `[2620:149:208:4300::7]:443`.
    package var remoteAddress: String? { remoteAddressValue.withLock { $0 } }
    /// True while new requests can be accepted (connecting or ready).
    package var isAcceptingRequests: Bool { state.rawValue <= HTTP2ConnectionState.ready.rawValue }

    func publishCounters() {
        activeValue.store(streams.count, ordering: .relaxed)
        queuedValue.store(queue.count, ordering: .relaxed)
    }

    func setState(_ newState: HTTP2ConnectionState) {
        guard newState.rawValue > localState.rawValue else { return }
        localState = newState
        stateValue.store(newState.rawValue, ordering: .relaxed)
        if goAwayReceived { lastStreamValue.store(receivedLastStreamID, ordering: .relaxed) }
        stateHandler?(self, newState)
    }

    func setLimit(_ value: Int) { limitValue.store(value, ordering: .relaxed) }

    // MARK: - Requests

    /// Sends `request`; `completion` runs once on the loop thread with the response or an `HTTP2Error`.
    /// Thread-safe. From the loop thread (e.g. inside another completion) the request is queued without a hop.
    /// - Parameter deadline: when to give up (`timeout`); default: `configuration.defaultRequestTimeout` from now.
    package func submit(_ request: HTTP2Request, deadline: HTTP2Deadline? = nil, completion: @escaping Completion) {
        let resolved = deadline ?? configuration.defaultRequestTimeout.map { HTTP2Deadline.after($0) } ?? .distantFuture
        submit(HTTP2ClosureStream(request, deadline: resolved, completion: completion))
    }

    /// Sends `stream`'s request; its ``HTTP2ClientStream/completed(_:)`` runs once on the loop thread. Thread-safe.
    package func submit(_ stream: HTTP2ClientStream) {
        if loop.inEventLoop {
            enqueue(stream)
        } else if inbox.append(stream) {
            loop.execute { self.drainInbox() }
        }
    }

    /// Submits several streams with one hop to the loop (none from the loop thread itself).
    package func submit(batch: [HTTP2ClientStream]) {
        if loop.inEventLoop {
            for stream in batch { enqueue(stream) }
        } else if inbox.append(batch) {
            loop.execute { self.drainInbox() }
        }
    }

    /// Enqueues everything submitted from other threads so far, in submission order (loop thread).
    private func drainInbox() {
        for stream in inbox.takeAll() { enqueue(stream) }
    }

    /// Async form of `submit`.
    func send(_ request: HTTP2Request, deadline: HTTP2Deadline? = nil) async throws(HTTP2Error) -> HTTP2Response {
        let result = await withCheckedContinuation { continuation in
            submit(request, deadline: deadline) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Sends a PING and reports the round-trip time; a missing ACK within `timeout` closes the connection
    /// (`pingTimeout`: the peer is considered dead) and fails everything pending.
    func ping(timeout: Duration? = nil, completion: @escaping @Sendable (Result<Duration, HTTP2Error>) -> Void) {
        let timeout = timeout ?? configuration.pingTimeout
        loop.execute { self.sendPing(timeout: timeout, completion: completion) }
    }

    /// Closes the connection now: sends GOAWAY, fails queued requests (`notProcessed`) and in-flight ones
    /// (`connectionClosed`). Thread-safe, idempotent.
    package func close() {
        loop.execute {
            guard let transport = self.transport, self.localState != .closed else { return }
            if let session = self.session {
                nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 0, nil, 0)
                var buffer: [UInt8] = []
                self.transportProduceOutput(into: &buffer)
            }
            transport.close(error: TLSError(.connectionClosed, reason: "closed locally"))
        }
    }

    // MARK: - Loop-side queueing

    func enqueue(_ stream: HTTP2ClientStream) {
        stream.prepareForWire()
        if localState == .closed {
            // Submitted from another thread while the connection was closing: never sent, so safe to retry.
            let reason = "connection closed before send: \(closeError?.reason ?? "closed")"
            stream.completed(.failure(HTTP2Error(.notProcessed, reason: reason)))
            return
        }
        if localState == .goingAway {
            stream.completed(.failure(HTTP2Error(.notProcessed, reason: "connection is going away")))
            return
        }
        if queue.count >= configuration.maxQueuedRequests {
            stream.completed(.failure(HTTP2Error(.notProcessed, reason: "local queue full")))
            return
        }
        queue.append(stream)
        if stream.deadline != .distantFuture {
            earliestDeadline = min(earliestDeadline, stream.deadline.uptimeNanoseconds)
            ensureSweepTimer()
        }
        transport?.scheduleFlush()
    }

    /// Moves queued requests onto the wire while streams are free.
    func drainQueue() {
        guard localState == .ready, let session else { return }
        let remote = Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
        let limit = min(configuration.maxConcurrentStreams, remote)
        while localState == .ready, streams.count < limit, let stream = queue.popFirst() {
            submitToSession(stream, session: session)
        }
        publishCounters()
    }

    private func submitToSession(_ stream: HTTP2ClientStream, session: OpaquePointer) {
        // The stream user data is the unretained stream: `streams` keeps it alive, and it is cleared whenever a
        // stream leaves `streams` before nghttp2 closes it (see `sweepDeadlines`).
        let userData = Unmanaged.passUnretained(stream).toOpaque()
        let streamID: Int32 = encoder.withFields(of: stream) { fields, count in
            if stream.http2Request.body.isEmpty {
                return nghttp2_submit_request(session, nil, fields, count, nil, userData)
            }
            var provider = nghttp2_data_provider()
            provider.read_callback = clientReadBody
            return nghttp2_submit_request(session, nil, fields, count, &provider, userData)
        }
        if streamID < 0 {
            let exhausted = streamID == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue
            stream.completed(.failure(HTTP2Error(exhausted ? .notProcessed : .invalidRequest,
                                                  reason: nghttp2ErrorText(Int(streamID)))))
            if exhausted { retireForStreamIDs(session: session) }
            return
        }
        stream.streamID = streamID
        streams.insert(stream)
        if streamID >= configuration.retirementStreamID { retireForStreamIDs(session: session) }
    }

    // MARK: - Deadlines

    func ensureSweepTimer() {
        guard sweepTimer == nil, localState != .closed else { return }
        sweepTimer = loop.schedule(at: .after(configuration.deadlineCheckInterval)) { [self] in
            sweepTimer = nil
            sweepDeadlines()
        }
    }

    /// Fails every queued or in-flight stream whose deadline has passed. Scans them only once the earliest deadline
    /// is due: with a backlog queued, a scan every 10 ms would visit thousands of requests 100 times a second.
    private func sweepDeadlines() {
        let now = HTTP2Deadline.now().uptimeNanoseconds
        guard earliestDeadline <= now else {
            if earliestDeadline != UInt64.max { ensureSweepTimer() }
            return
        }
        var earliest = UInt64.max
        let expiredQueued = queue.removeAll { $0.deadline.uptimeNanoseconds <= now }
        for stream in expiredQueued {
            stream.completed(.failure(HTTP2Error(.timeout, reason: "deadline passed while queued (not sent)")))
        }
        queue.forEach { earliest = min(earliest, $0.deadline.uptimeNanoseconds) }
        var expired: [HTTP2ClientStream] = []
        streams.forEach { stream in
            let deadline = stream.deadline.uptimeNanoseconds
            if deadline <= now { expired.append(stream) } else { earliest = min(earliest, deadline) }
        }
        for stream in expired {
            streams.remove(stream)
            if let session {
                nghttp2_session_set_stream_user_data(session, stream.streamID, nil)
                nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.streamID,
                                          NGHTTP2_CANCEL.rawValue)
            }
            stream.completed(.failure(HTTP2Error(.timeout, reason: "no response before the deadline")))
        }
        if !expired.isEmpty || !expiredQueued.isEmpty {
            publishCounters()
            transport?.scheduleFlush()
        }
        earliestDeadline = earliest
        if earliest != UInt64.max { ensureSweepTimer() }
    }
}
