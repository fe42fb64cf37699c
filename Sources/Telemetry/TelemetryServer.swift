@preconcurrency import Glibc
import Foundation
import Synchronization

/// A small HTTP/1.1 server for Prometheus scrapes and Kubernetes probes.
///
/// - `GET /metrics`: the registry in text format 0.0.4.
/// - `GET /healthz`: 200 while the process runs.
/// - `GET /readyz`: 200 when the ``ReadinessFlag`` is set, else 503.
///
/// One thread multiplexes every connection with `poll(2)` on non-blocking sockets; each connection answers one
/// request and closes. Unknown paths get 404, other methods 405, malformed requests 400, oversized heads 431,
/// and clients too slow to send a request 408, so no client can block the others. At the connection cap a new
/// connection evicts the oldest one that has not sent a complete request (or, when every connection is answering,
/// the oldest of all), so idle or half-sent connections held open cannot keep probes and scrapes out; evictions are
/// counted in `callpush_telemetry_connections_evicted_total`.
package final class TelemetryServer: Sendable {
    package let configuration: TelemetryServerConfiguration
    private let registry: MetricsRegistry
    private let readiness: ReadinessFlag
    private let logger: Logger
    private let listener: Int32
    private let wakeup: (read: Int32, write: Int32)
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)
    private let evictions: Counter
    /// The port actually bound (useful with port 0).
    package let port: Int

    /// Binds and starts serving on a thread of its own, which runs until ``stop()``.
    /// - Throws: ``TelemetryServerError`` when the address cannot be bound.
    package init(
        configuration: TelemetryServerConfiguration = .init(),
        registry: MetricsRegistry,
        readiness: ReadinessFlag,
        logger: Logger = .disabled
    ) throws(TelemetryServerError) {
        self.configuration = configuration
        self.registry = registry
        self.readiness = readiness
        self.logger = logger
        self.evictions = registry.counter(
            "callpush_telemetry_connections_evicted_total",
            help: "Connections the metrics server closed at its connection cap to make room for a new one.")
        let (listener, port) = try Self.bind(host: configuration.host, port: configuration.port)
        self.listener = listener
        self.port = port
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            close(listener)
            throw TelemetryServerError(.bindFailed, "pipe: \(String(cString: strerror(errno)))")
        }
        self.wakeup = (pipeEnds[0], pipeEnds[1])
        let worker = Thread { [self] in
            // The kernel's name (`Thread.name` is Foundation's own): scrapes show apart from Dispatch's threads.
            ThreadName.setCurrent("telemetry-http")
            serve()
            finished.signal()
        }
        worker.start()
        logger.info("telemetry server listening", metadata: ["http.port": String(port), "http.host": configuration.host])
    }

    /// Stops accepting, closes every connection and waits for the thread to end. Idempotent.
    package func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        var one: UInt8 = 1
        _ = Glibc.write(wakeup.write, &one, 1)
        finished.wait()
        close(listener)
        close(wakeup.read)
        close(wakeup.write)
    }

    // MARK: - Serving

    private final class Connection {
        let fd: Int32
        let deadline: Double
        /// Accept order: the eviction victim is the connection with the lowest.
        let sequence: UInt64
        var input: [UInt8] = []
        var output: [UInt8] = []
        var written = 0
        init(fd: Int32, deadline: Double, sequence: UInt64) {
            self.fd = fd
            self.deadline = deadline
            self.sequence = sequence
        }
        /// Still waiting for a complete request (idle or half-sent), rather than being answered.
        var isWaitingForRequest: Bool { output.isEmpty }
        /// Its whole answer is written.
        var isFinished: Bool { !output.isEmpty && written == output.count }
    }

    private func serve() {
        var connections: [Int32: Connection] = [:]
        var accepted: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while running.load(ordering: .acquiring) {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeup.read, events: Int16(POLLIN), revents: 0)]
            // The connection each entry was polled for: an fd closed and reused by a newer connection in this turn
            // must not get the older one's flags.
            let polled = Array(connections.values)
            for connection in polled {
                let events = connection.output.isEmpty ? POLLIN : POLLOUT
                fds.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
            }
            let ready = poll(&fds, nfds_t(fds.count), 250)
            if ready < 0 && errno != EINTR { break }
            let now = Self.monotonicSeconds()
            for (entry, connection) in zip(fds.dropFirst(2), polled) where entry.revents != 0 {
                guard connections[connection.fd] === connection else { continue }
                if connection.output.isEmpty {
                    readRequest(connection, buffer: &buffer)
                } else {
                    flush(connection)
                }
                let hungUp = connection.output.isEmpty && entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
                if connection.isFinished || hungUp { closeConnection(connection, in: &connections, buffer: &buffer) }
            }
            // After the polled connections: what they sent is read before a new connection may evict one of them.
            if fds[0].revents & Int16(POLLIN) != 0 { acceptAll(into: &connections, accepted: &accepted, now: now, buffer: &buffer) }
            for connection in connections.values where connection.isWaitingForRequest && now > connection.deadline {
                respond(connection, status: 408, reason: "Request Timeout", body: "request timeout\n")
            }
        }
        for connection in connections.values { close(connection.fd) }
    }

    private func closeConnection(_ connection: Connection, in connections: inout [Int32: Connection], buffer: inout [UInt8]) {
        Self.discardInputAndClose(connection.fd, buffer: &buffer)
        connections[connection.fd] = nil
    }

    private func acceptAll(into connections: inout [Int32: Connection], accepted: inout UInt64, now: Double, buffer: inout [UInt8]) {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { return }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if connections.count >= max(1, configuration.maximumConnections) {
                evictOne(from: &connections, buffer: &buffer)
            }
            accepted += 1
            connections[fd] = Connection(fd: fd, deadline: now + configuration.requestTimeout.inSeconds, sequence: accepted)
        }
    }

    /// Makes room for a new connection. Before a waiting connection is evicted, what it sent is read: a probe whose
    /// request has arrived is answered (and leaves) instead of being evicted by a flood of connections behind it.
    private func evictOne(from connections: inout [Int32: Connection], buffer: inout [UInt8]) {
        for connection in connections.values.filter(\.isWaitingForRequest).sorted(by: { $0.sequence < $1.sequence }) {
            readRequest(connection, buffer: &buffer)
            if connection.isWaitingForRequest { break }
            if connection.isFinished {
                closeConnection(connection, in: &connections, buffer: &buffer)
                return
            }
        }
        guard let victim = Self.evictionVictim(connections) else { return }
        close(victim.fd)
        connections[victim.fd] = nil
        evictions.increment()
    }

    /// The oldest connection still waiting for its request; when every connection is being answered (a slow
    /// reader), the oldest of all.
    private static func evictionVictim(_ connections: [Int32: Connection]) -> Connection? {
        let waiting = connections.values.filter(\.isWaitingForRequest)
        return (waiting.isEmpty ? Array(connections.values) : waiting).min { $0.sequence < $1.sequence }
    }

    private func readRequest(_ connection: Connection, buffer: inout [UInt8]) {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                connection.input.append(contentsOf: buffer[0..<count])
                if connection.input.count > configuration.maximumRequestBytes {
                    respond(connection, status: 431, reason: "Request Header Fields Too Large", body: "request too large\n")
                    return
                }
                continue
            }
            if count == 0 {
                // Peer finished sending; answer what we have (a half-closed client still reads).
                if HTTPRequestHead.endOfHead(in: connection.input) == nil {
                    respond(connection, status: 400, reason: "Bad Request", body: "incomplete request\n")
                    return
                }
            } else if errno == EINTR {
                continue
            } else if errno != EAGAIN && errno != EWOULDBLOCK {
                respond(connection, status: 400, reason: "Bad Request", body: "read error\n")
                return
            }
            break
        }
        guard HTTPRequestHead.endOfHead(in: connection.input) != nil else { return }
        route(connection)
    }

    private func route(_ connection: Connection) {
        guard let head = HTTPRequestHead(parsing: connection.input) else {
            respond(connection, status: 400, reason: "Bad Request", body: "malformed request\n")
            return
        }
        let isHead = head.method == "HEAD"
        guard head.method == "GET" || isHead else {
            respond(connection, status: 405, reason: "Method Not Allowed", body: "method not allowed\n",
                    extraHeaders: "Allow: GET, HEAD\r\n")
            return
        }
        switch head.path {
        case "/metrics":
            respond(connection, status: 200, reason: "OK", body: registry.exposition(),
                    contentType: MetricsRegistry.contentType, omitBody: isHead)
        case "/healthz":
            respond(connection, status: 200, reason: "OK", body: "ok\n", omitBody: isHead)
        case "/readyz":
            if readiness.isReady {
                respond(connection, status: 200, reason: "OK", body: "ready\n", omitBody: isHead)
            } else {
                respond(connection, status: 503, reason: "Service Unavailable", body: "not ready\n", omitBody: isHead)
            }
        default:
            respond(connection, status: 404, reason: "Not Found", body: "not found\n", omitBody: isHead)
        }
    }

    private func respond(
        _ connection: Connection,
        status: Int,
        reason: String,
        body: String,
        contentType: String = "text/plain; charset=utf-8",
        extraHeaders: String = "",
        omitBody: Bool = false
    ) {
        let bodyBytes = Array(body.utf8)
        let head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: \(contentType)\r\nContent-Length: \(bodyBytes.count)\r\n"
            + "Connection: close\r\n\(extraHeaders)\r\n"
        connection.output = Array(head.utf8) + (omitBody ? [] : bodyBytes)
        connection.written = 0
        flush(connection)
    }

    private func flush(_ connection: Connection) {
        while connection.written < connection.output.count {
            let count = connection.output.withUnsafeBytes {
                send(connection.fd, $0.baseAddress! + connection.written, $0.count - connection.written, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                connection.written += count
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return
            } else {
                connection.written = connection.output.count  // peer gone: nothing more to send
            }
        }
    }

    // MARK: - Socket helpers

    /// Reads what the client still sent before closing, so the kernel does not reset the connection and
    /// destroy the answer before the client has read it.
    private static func discardInputAndClose(_ fd: Int32, buffer: inout [UInt8]) {
        shutdown(fd, Int32(SHUT_WR))
        for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
        }
        close(fd)
    }

    private static func bind(host: String, port: Int) throws(TelemetryServerError) -> (Int32, Int) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1, (0...65535).contains(port) else {
            throw TelemetryServerError(.invalidAddress, "cannot bind \(host):\(port): not an IPv4 address and port")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TelemetryServerError(.bindFailed, "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw TelemetryServerError(.bindFailed, "cannot bind \(host):\(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: actual.sin_port)))
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
