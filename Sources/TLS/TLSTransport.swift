package import Crypto
@preconcurrency import Glibc
internal import COpenSSL
package import Runtime

/// What a `TLSTransport` reports to the protocol above it (the HTTP/2 client and server). Called on the loop thread.
package protocol TLSTransportDelegate: AnyObject {
    /// TCP + TLS are up and ALPN was checked.
    func transportDidBecomeActive()
    /// Bytes arrived. Return false to close the connection (the delegate has already recorded why).
    func transportDidRead(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// End of a loop turn: append pending output to `buffer`.
    func transportProduceOutput(into buffer: inout [UInt8])
    /// After a flush: return true when the session has nothing left to do and the transport should close.
    func transportShouldClose() -> Bool
    /// The transport closed; `error` says why. Called exactly once.
    func transportDidClose(error: TLSError)
}

/// One TCP socket with OpenSSL on top (`SSL_set_fd`, non-blocking), driven by an `EventLoop`.
/// Owns the descriptor and the `SSL` object and frees both exactly once, in `close`.
/// A loop turn reads at most ``readBudget`` bytes (level-triggered epoll reports the rest next turn), so one
/// connection's backlog never holds back the answers to its first requests; the output a turn produced is collected
/// once and written with as few `SSL_write` calls as possible.
/// Loop-thread only.
package final class TLSTransport: EventLoopHandler {
    /// `lingering`: our side is finished (close_notify sent, write side shut down); we read and discard until the
    /// peer closes or ``lingerTimeout`` passes, so a peer still sending does not get a reset that destroys the
    /// GOAWAY and answers it has not read yet.
    enum State { case connecting, handshaking, active, lingering, closed }

    let loop: EventLoop
    private(set) var state: State
    private var fd: Int32
    private var ssl: OpaquePointer?
    private let isClient: Bool
    private let requireH2: Bool
    /// Server side: the context requests client certificates (it has a client CA).
    private let requestsClientCertificate: Bool
    /// Server side: the fingerprint of the client certificate the handshake verified against the client CA; nil
    /// when the client presented none (or none was requested). Set once, when the handshake completes, before
    /// ``TLSTransportDelegate/transportDidBecomeActive()``.
    package private(set) var verifiedClientCertificate: CertificateFingerprint?
    /// Strong on purpose: an open connection keeps itself alive through the loop's handler table; cleared on close.
    package var delegate: (any TLSTransportDelegate)?

    private var interest: UInt32 = 0
    private var outBuffer: [UInt8] = []
    private var outOffset = 0
    private var flushScheduled = false
    private var lingerTimer: EventLoopTimer?
    /// Longest wait for the peer to close after we finished. Default: 1 s.
    static let lingerTimeout: Duration = .seconds(1)
    private var readBuffer: UnsafeMutableRawPointer
    private let readBufferSize = 64 * 1024
    /// Decrypted bytes handed to the delegate per loop turn, at most (a record may overshoot it). Four full TLS
    /// records (64 KiB): about 120 APNs pushes on a server, a thousand answers on a client. One record per turn, with
    /// output written a record at a time, woke the peer more often and cost more than it saved at moderate load
    /// (docs/performance.md, "Latency").
    static let readBudget = 64 * 1024

    private static let eventIn = EventLoop.readableEvents
    private static let eventOut = EventLoop.writableEvents

    /// Client transport: `fd` is connecting (non-blocking connect started).
    package init(loop: EventLoop, connectingFD fd: Int32, context: TLSContext, host: String) throws(TLSError) {
        self.loop = loop
        self.fd = fd
        self.isClient = true
        self.requireH2 = true
        self.requestsClientCertificate = false
        self.state = .connecting
        let ssl = try Self.makeSSL(context, fd: fd)
        self.ssl = ssl
        self.readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
        SSL_set_connect_state(ssl)
        let name = context.serverName ?? host
        if Socket.isIPAddress(name) {
            if context.verifyPeer {
                _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name)
            }
        } else {
            _ = COpenSSL_SSL_set_tlsext_host_name(ssl, name)
            if context.verifyPeer { _ = SSL_set1_host(ssl, name) }
        }
    }

    /// A new SSL object on `fd`, or the OpenSSL error.
    private static func makeSSL(_ context: TLSContext, fd: Int32) throws(TLSError) -> OpaquePointer {
        OpenSSLErrorStack.clear()
        guard let ssl = SSL_new(context.context) else {
            throw TLSError(.configuration, reason: "SSL_new: \(OpenSSLErrorStack.drainedDescription())")
        }
        SSL_set_fd(ssl, fd)
        return ssl
    }

    /// Server transport: `fd` is an accepted socket.
    package init(loop: EventLoop, acceptedFD fd: Int32, context: TLSContext) throws(TLSError) {
        self.loop = loop
        self.fd = fd
        self.isClient = false
        self.requireH2 = false
        self.requestsClientCertificate = context.role == .server && context.verifyPeer
        self.state = .handshaking
        let ssl = try Self.makeSSL(context, fd: fd)
        self.ssl = ssl
        self.readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
        SSL_set_accept_state(ssl)
    }

    deinit {
        readBuffer.deallocate()
        if let ssl { SSL_free(ssl) }
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Registers with the loop. Must be called on the loop thread.
    package func start() {
        let events = state == .connecting ? Self.eventOut : Self.eventIn
        interest = events
        if !loop.register(fd: fd, handler: self, events: events) {
            close(error: TLSError(.connectFailed, reason: "epoll_ctl: \(errnoText())"))
            return
        }
        if state == .handshaking { handshake() }
    }

    private func setInterest(_ events: UInt32) {
        if events != interest && state != .closed {
            interest = events
            loop.modify(fd: fd, events: events)
        }
    }

    // MARK: - EventLoopHandler

    package func handleEvents(_ events: UInt32) {
        switch state {
        case .connecting:
            let error = Socket.pendingError(fd)
            if error != 0 {
                close(error: TLSError(.connectFailed, reason: "connect: \(errnoText(error))"))
                return
            }
            state = .handshaking
            handshake()
        case .handshaking:
            handshake()
        case .active:
            if events & Self.eventOut != 0 { writePending() }
            if state == .active && events & ~Self.eventOut != 0 { readAvailable() }
        case .lingering:
            discardInput()
        case .closed:
            break
        }
    }

    package func flush() {
        flushScheduled = false
        guard state == .active, let delegate else { return }
        delegate.transportProduceOutput(into: &outBuffer)
        writePending()
        if state == .active && outOffset >= outBuffer.count && delegate.transportShouldClose() {
            finish(error: TLSError(.connectionClosed, reason: "session finished"))
        }
    }

    package func loopWillShutdown() {
        close(error: TLSError(.shutdown, reason: "event loop shut down"))
    }

    /// Asks for a flush at the end of this loop turn.
    package func scheduleFlush() {
        if !flushScheduled && state == .active {
            flushScheduled = true
            loop.scheduleFlush(self)
        }
    }

    // MARK: - Handshake

    private func handshake() {
        guard let ssl else { return }
        OpenSSLErrorStack.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            if isClient {
                var data: UnsafePointer<UInt8>?
                var length: UInt32 = 0
                SSL_get0_alpn_selected(ssl, &data, &length)
                let selected = data.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) }
                if requireH2 && selected != "h2" {
                    close(error: TLSError(.alpnMismatch, reason: "server selected ALPN \(selected ?? "none"), need h2"))
                    return
                }
            } else if requestsClientCertificate {
                verifiedClientCertificate = Self.verifiedPeerCertificate(ssl)
            }
            state = .active
            setInterest(Self.eventIn)
            delegate?.transportDidBecomeActive()
            scheduleFlush()
            // Data may already be buffered inside OpenSSL.
            if state == .active { readAvailable() }
            return
        }
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ:
            setInterest(Self.eventIn)
        case SSL_ERROR_WANT_WRITE:
            setInterest(Self.eventOut)
        default:
            let stack = OpenSSLErrorStack.drainedDescription()
            let verify = SSL_get_verify_result(ssl)
            if isClient && verify != X509_V_OK {
                let text = String(cString: X509_verify_cert_error_string(verify))
                let code: TLSError.Code =
                    verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH
                    ? .hostnameMismatch : .certificateVerifyFailed
                close(error: TLSError(code, reason: "\(text) (\(stack))"))
            } else {
                let detail = error == SSL_ERROR_SYSCALL ? "syscall: \(errnoText()); " : ""
                close(error: TLSError(.handshakeFailed, reason: detail + stack))
            }
        }
    }

    /// The fingerprint of the peer's leaf certificate when it presented one and it verified; nil otherwise (or
    /// when OpenSSL cannot digest it). Owned by `ssl`: `SSL_get0_peer_certificate` does not add a reference.
    private static func verifiedPeerCertificate(_ ssl: OpaquePointer) -> CertificateFingerprint? {
        guard let certificate = SSL_get0_peer_certificate(ssl), SSL_get_verify_result(ssl) == X509_V_OK else { return nil }
        let fingerprint = try? CertificateFingerprint(certificate: certificate)
        OpenSSLErrorStack.clear()
        return fingerprint
    }

    // MARK: - Read / write

    private func readAvailable() {
        guard let ssl else { return }
        var budget = Self.readBudget
        while state == .active {
            OpenSSLErrorStack.clear()
            let count = SSL_read(ssl, readBuffer, Int32(readBufferSize))
            if count > 0 {
                let bytes = UnsafeRawBufferPointer(start: readBuffer, count: Int(count))
                guard let delegate, delegate.transportDidRead(bytes) else {
                    close(error: TLSError(.inputRejected, reason: "session rejected input"))
                    return
                }
                budget -= Int(count)
                // Past the budget, stop unless OpenSSL holds decrypted bytes epoll cannot see: the socket is
                // reported again next turn, after this turn's output.
                if budget <= 0 && SSL_has_pending(ssl) == 0 { break }
                continue
            }
            let error = SSL_get_error(ssl, count)
            switch error {
            case SSL_ERROR_WANT_READ:
                scheduleFlush()
                return
            case SSL_ERROR_WANT_WRITE:
                setInterest(Self.eventIn | Self.eventOut)
                return
            case SSL_ERROR_ZERO_RETURN:
                close(error: TLSError(.connectionClosed, reason: "peer closed TLS"))
                return
            case SSL_ERROR_SYSCALL:
                let text = count == 0 || errno == 0 ? "peer closed TCP" : errnoText()
                close(error: TLSError(.connectionClosed, reason: text))
                return
            default:
                close(error: TLSError(.connectionClosed, reason: OpenSSLErrorStack.drainedDescription()))
                return
            }
        }
        scheduleFlush()
    }

    private func writePending() {
        guard let ssl else { return }
        while outOffset < outBuffer.count && state == .active {
            OpenSSLErrorStack.clear()
            let remaining = min(outBuffer.count - outOffset, Int(Int32.max))
            let written = outBuffer.withUnsafeBytes { raw in
                SSL_write(ssl, raw.baseAddress! + outOffset, Int32(remaining))
            }
            if written > 0 {
                outOffset += Int(written)
                continue
            }
            let error = SSL_get_error(ssl, written)
            if error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ {
                setInterest(Self.eventIn | Self.eventOut)
                return
            }
            let text = error == SSL_ERROR_SYSCALL ? errnoText() : OpenSSLErrorStack.drainedDescription()
            close(error: TLSError(.connectionClosed, reason: "write: \(text)"))
            return
        }
        if outOffset >= outBuffer.count {
            outBuffer.removeAll(keepingCapacity: outBuffer.capacity <= 1 << 20)
            outOffset = 0
            setInterest(Self.eventIn)
        }
    }

    // MARK: - Close

    /// Ends a session that has nothing more to say: close_notify, shut down our write side, then linger reading
    /// until the peer closes (or ``lingerTimeout``), and only then close the socket.
    private func finish(error: TLSError) {
        guard state == .active, let ssl else {
            close(error: error)
            return
        }
        OpenSSLErrorStack.clear()
        _ = SSL_shutdown(ssl)
        OpenSSLErrorStack.clear()
        Glibc.shutdown(fd, Int32(SHUT_WR))
        state = .lingering
        interest = 0
        setInterest(Self.eventIn)
        lingerTimer = loop.schedule(at: .after(Self.lingerTimeout)) { [weak self] in
            self?.close(error: error)
        }
        discardInput()
    }

    /// Lingering: reads and drops whatever the peer still sends; closes at its EOF or error.
    private func discardInput() {
        while state == .lingering {
            let count = recv(fd, readBuffer, readBufferSize, 0)
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            close(error: TLSError(.connectionClosed, reason: "session finished"))
        }
    }

    /// Closes now: best-effort TLS close_notify unless `abrupt`, then the socket. Idempotent.
    package func close(error: TLSError, abrupt: Bool = false) {
        guard state != .closed else { return }
        let wasLingering = state == .lingering
        state = .closed
        lingerTimer?.cancel()
        lingerTimer = nil
        loop.deregister(fd: fd)
        if let ssl {
            if wasLingering {
                // close_notify was sent when lingering began.
            } else if abrupt {
                Socket.setLingerZero(fd)
            } else {
                // Push what is still buffered (e.g. a GOAWAY), then close_notify; never block.
                if outOffset < outBuffer.count {
                    _ = outBuffer.withUnsafeBytes { raw in
                        SSL_write(ssl, raw.baseAddress! + outOffset, Int32(outBuffer.count - outOffset))
                    }
                }
                _ = SSL_shutdown(ssl)
            }
            OpenSSLErrorStack.clear()
            SSL_free(ssl)
            self.ssl = nil
        }
        Glibc.close(fd)
        fd = -1
        outBuffer = []
        delegate?.transportDidClose(error: error)
    }
}
