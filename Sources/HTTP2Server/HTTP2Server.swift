@preconcurrency import Glibc
internal import CNGHTTP2
import Synchronization
package import Telemetry
package import HTTP2
package import Runtime
package import TLS

/// An HTTP/2-over-TLS server: accepts on one loop, spreads connections over the group's loops round-robin, and
/// hands each complete request to `handler` on the connection's loop thread. The handler answers through the
/// `HTTP2ServerResponder`, at once or later from any thread.
///
/// - Important: thread-safe; the connection registry is behind a `Mutex`.
package final class HTTP2Server: Sendable {
    package let configuration: HTTP2ServerConfiguration
    /// The bound port (the ephemeral one when `configuration.port` was 0).
    package let port: Int
    let group: EventLoopGroup
    let tls: TLSContext
    let handler: HTTP2ServerConnection.Handler
    let logger: Logger
    private let listener: Listener
    private let state = Mutex<ServerState>(ServerState())

    struct ServerState {
        var connections: [Int: HTTP2ServerConnection] = [:]
        var nextID = 1
        var maxConcurrentStreams: Int?
        var stopped = false
    }

    /// Binds and starts accepting.
    /// - Throws: `HTTP2Error.Code.bindFailed`.
    package init(
        configuration: HTTP2ServerConfiguration = HTTP2ServerConfiguration(),
        tls: TLSContext,
        group: EventLoopGroup,
        logger: Logger = .disabled,
        handler: @escaping HTTP2ServerConnection.Handler
    ) throws(HTTP2Error) {
        self.configuration = configuration
        self.tls = tls
        self.group = group
        self.handler = handler
        self.logger = logger
        let fd: Int32, port: Int
        do throws(SocketError) {
            (fd, port) = try Socket.listen(host: configuration.host, port: configuration.port,
                                           backlog: configuration.backlog)
        } catch {
            throw HTTP2Error(error)
        }
        self.port = port
        listener = Listener(fd: fd, loop: group.loops[0])
        listener.start { [weak self] client in
            guard let self else {
                Glibc.close(client)
                return
            }
            self.accepted(fd: client)
        }
    }

    /// Live connections.
    var connections: [HTTP2ServerConnection] {
        state.withLock { Array($0.connections.values) }.sorted { $0.id < $1.id }
    }

    /// Changes SETTINGS_MAX_CONCURRENT_STREAMS on every live connection now, and for new ones.
    package func setMaxConcurrentStreams(_ value: Int) {
        let live = state.withLock { state -> [HTTP2ServerConnection] in
            state.maxConcurrentStreams = value
            return Array(state.connections.values)
        }
        for connection in live { connection.setMaxConcurrentStreams(value) }
    }

    /// Sends GOAWAY on every live connection (see `HTTP2ServerConnection.sendGoAway`).
    package func sendGoAway(lastStreamID: Int32? = nil, errorCode: UInt32 = 0, debugData: String = "") {
        for connection in connections {
            connection.sendGoAway(lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData)
        }
    }

    /// Drops every live connection abruptly (TCP RST).
    package func dropAllConnections() {
        for connection in connections { connection.drop() }
    }

    /// Stops accepting and drops every connection. Does not shut the loop group down.
    package func stop() {
        let live = state.withLock { state -> [HTTP2ServerConnection] in
            state.stopped = true
            return Array(state.connections.values)
        }
        let listener = listener
        group.loops[0].execute { listener.close() }
        for connection in live { connection.drop() }
    }

    // MARK: - Internal

    func accepted(fd: Int32) {
        let loop = group.next()
        let registration = state.withLock { state -> (HTTP2ServerConnection, Int?)? in
            if state.stopped { return nil }
            var configuration = self.configuration
            if let value = state.maxConcurrentStreams { configuration.maxConcurrentStreams = value }
            let connection = HTTP2ServerConnection(id: state.nextID, loop: loop, configuration: configuration,
                                                   handler: handler)
            state.nextID += 1
            state.connections[connection.id] = connection
            return (connection, nil)
        }
        guard let (connection, _) = registration else {
            close(fd)
            return
        }
        connection.server = self
        let tls = self.tls
        loop.execute { connection.start(fd: fd, context: tls) }
    }

    func connectionDidClose(_ connection: HTTP2ServerConnection) {
        _ = state.withLock { $0.connections.removeValue(forKey: connection.id) }
    }
}

/// The listening socket. It is registered with, accepts on and is closed on loop 0; its open/closed state sits behind a
/// mutex only so that the server can hold it as a `Sendable` value (the lock is taken once per accepted connection).
final class Listener: EventLoopHandler, Sendable {
    typealias Accept = @Sendable (_ client: Int32) -> Void

    let fd: Int32
    let loop: EventLoop
    private let state = Mutex<State>(State())

    private struct State {
        var accept: Accept?
        var isOpen = false
        var fdClosed = false
    }

    init(fd: Int32, loop: EventLoop) {
        self.fd = fd
        self.loop = loop
    }

    /// Starts accepting on the loop; `accept` gets each new non-blocking client descriptor on the loop thread.
    func start(accept: @escaping Accept) {
        loop.execute { [self] in
            let registered = loop.register(fd: fd, handler: self, events: EventLoop.readableEvents)
            state.withLock { state in
                state.accept = accept
                state.isOpen = registered
            }
        }
    }

    func handleEvents(_ events: UInt32) {
        while let accept = state.withLock({ $0.isOpen ? $0.accept : nil }) {
            let client = Glibc.accept(fd, nil, nil)
            if client < 0 { return }
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            Socket.setNoDelay(client)
            accept(client)
        }
    }

    func flush() {}

    func loopWillShutdown() { close() }

    /// Stops accepting and closes the socket once (loop thread).
    func close() {
        let (wasOpen, closeFD) = state.withLock { state in
            defer {
                state.isOpen = false
                state.fdClosed = true
                state.accept = nil
            }
            return (state.isOpen, !state.fdClosed)
        }
        if wasOpen { loop.deregister(fd: fd) }
        if closeFD { Glibc.close(fd) }
    }
}
