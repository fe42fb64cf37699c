@preconcurrency import Glibc
internal import CNGHTTP2
package import Crypto
import Synchronization
internal import HTTP2
package import Runtime
internal import TLS

/// One accepted HTTP/2-over-TLS connection of an `HTTP2Server`, confined to one `EventLoop`.
///
/// - Important: `@unchecked Sendable`: the public methods hop to the loop (`execute`) and are thread-safe; all other
///   state is loop-confined. The loop's handler table keeps it alive while it is open.
package final class HTTP2ServerConnection: @unchecked Sendable {
    package typealias Handler = @Sendable (HTTP2ServerRequest, HTTP2ServerResponder) -> Void

    /// A process-unique id (for logs and tests).
    package let id: Int
    package let loop: EventLoop
    /// Released when the connection closes: a handler that keeps its connections (the mock APNs server's per-connection
    /// entries do) would otherwise form a cycle through it, and the handler with all it holds outlived the server.
    private var handler: Handler?
    let configuration: HTTP2ServerConfiguration
    weak var server: HTTP2Server?

    var transport: TLSTransport?
    var session: OpaquePointer?
    /// nghttp2's memory; outlives `session` (deleted in `transportDidClose`).
    let allocator = NGHTTP2Allocator()
    var streams = ServerStreamTable()
    /// Closed streams kept for the next requests (see ``openStream(_:)``).
    var spareStreams: [ServerStream] = []
    /// The stream the last frame callback was about: a request's HEADERS, CONTINUATION and DATA arrive back to
    /// back, so most callbacks skip the dictionary lookup. Unretained (``streams`` keeps it); cleared when the stream
    /// leaves ``streams``.
    var currentStream: Unmanaged<ServerStream>?
    let encoder = NGHTTP2HeaderEncoder()
    var requestsReceived = 0
    var goAwaySentLastStreamID: Int32?
    var closed = false
    private let closedFlag = Atomic<Bool>(false)
    private let verifiedClientCertificate = Mutex<CertificateFingerprint?>(nil)

    init(id: Int, loop: EventLoop, configuration: HTTP2ServerConfiguration, handler: @escaping Handler) {
        self.id = id
        self.loop = loop
        self.configuration = configuration
        self.handler = handler
    }

    /// True once the connection has closed.
    package var isClosed: Bool { closedFlag.load(ordering: .relaxed) }

    /// The client certificate the TLS handshake verified against the server's client CA (its SHA-256
    /// fingerprint); nil when the client presented none or the server requests none
    /// (``TLSServerConfiguration/clientCAFile``, ``TLSServerConfiguration/clientCertificateOptional``). Set once the
    /// handshake completes, so it is known before the connection's first request reaches the handler. Thread-safe.
    package var clientCertificate: CertificateFingerprint? { verifiedClientCertificate.withLock { $0 } }

    /// Records what the TLS handshake verified; loop thread, once, when the transport becomes active.
    func recordClientCertificate(_ fingerprint: CertificateFingerprint?) {
        verifiedClientCertificate.withLock { $0 = fingerprint }
    }

    func start(fd: Int32, context: TLSContext) {
        do {
            let transport = try TLSTransport(loop: loop, acceptedFD: fd, context: context)
            self.transport = transport
            transport.delegate = self
            transport.start()
        } catch {
            Glibc.close(fd)
            markClosed()
        }
    }

    // MARK: - Control (any thread)

    /// Sends a new SETTINGS frame with SETTINGS_MAX_CONCURRENT_STREAMS = `value` on this live connection.
    /// On the connection's loop thread (e.g. from a request handler) it is queued at once, ahead of the answer
    /// submitted after it, so the client knows the new limit when it reads that answer.
    package func setMaxConcurrentStreams(_ value: Int) {
        if loop.inEventLoop {
            submitMaxConcurrentStreams(value)
        } else {
            loop.execute { self.submitMaxConcurrentStreams(value) }
        }
    }

    private func submitMaxConcurrentStreams(_ value: Int) {
        guard let session else { return }
        var entry = nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                           value: UInt32(clamping: value))
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entry, 1)
        transport?.scheduleFlush()
    }

    /// Sends GOAWAY. `lastStreamID` defaults to the highest stream received so far; streams above it are not
    /// processed (their requests are not handed to the handler). The connection closes once the remaining streams
    /// are answered.
    /// On the connection's loop thread (e.g. from a request handler) it is queued at once, ahead of answers and
    /// resets submitted after it, so the client learns of it before it can reuse the connection.
    package func sendGoAway(lastStreamID: Int32? = nil, errorCode: UInt32 = 0, debugData: String = "") {
        if loop.inEventLoop {
            submitGoAway(lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData)
        } else {
            loop.execute { self.submitGoAway(lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData) }
        }
    }

    /// Closes the TCP connection at once (RST, no GOAWAY, no TLS close_notify).
    package func drop() {
        loop.execute { self.transport?.close(error: TLSError(.connectionClosed, reason: "dropped"), abrupt: true) }
    }

    func submitGoAway(lastStreamID: Int32?, errorCode: UInt32, debugData: String) {
        guard let session else { return }
        let last = lastStreamID ?? nghttp2_session_get_last_proc_stream_id(session)
        goAwaySentLastStreamID = min(goAwaySentLastStreamID ?? Int32.max, last)
        var debug = Array(debugData.utf8)
        debug.withUnsafeMutableBufferPointer { buffer in
            _ = nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), last, errorCode,
                                      buffer.baseAddress, buffer.count)
        }
        // Streams above the last id will never be answered.
        for stream in streams.all where stream.streamID > last { stream.abandoned = true }
        transport?.scheduleFlush()
    }

    // MARK: - Responding (loop thread)

    func respond(streamID: Int32, status: Int, headers: [HTTP2Header], body: [UInt8]) {
        if !loop.inEventLoop {
            loop.execute { self.respond(streamID: streamID, status: status, headers: headers, body: body) }
            return
        }
        guard let stream = answerableStream(streamID) else { return }
        encoder.begin()
        addStatus(status)
        for header in headers { encoder.add(header.name, header.value, neverIndex: header.neverIndex) }
        submitResponse(stream, body: body)
    }

    /// Like ``respond(streamID:status:headers:body:)`` with the fields written by `fields`; off the loop thread they
    /// are collected into `HTTP2Header`s first.
    func respond(streamID: Int32, status: Int, body: [UInt8], fields: (HTTP2HeaderWriter) -> Void) {
        if !loop.inEventLoop {
            let scratch = NGHTTP2HeaderEncoder(capacity: 256)
            fields(HTTP2HeaderWriter(encoder: scratch))
            respond(streamID: streamID, status: status, headers: scratch.headers, body: body)
            return
        }
        guard let stream = answerableStream(streamID) else { return }
        encoder.begin()
        addStatus(status)
        fields(HTTP2HeaderWriter(encoder: encoder))
        submitResponse(stream, body: body)
    }

    /// The open stream `streamID` when it still wants an answer, marked answered.
    private func answerableStream(_ streamID: Int32) -> ServerStream? {
        guard session != nil, let stream = stream(streamID), !stream.responded, !stream.abandoned else { return nil }
        stream.responded = true
        return stream
    }

    /// Submits the encoder's fields and `body` as the answer on `stream`.
    private func submitResponse(_ stream: ServerStream, body: [UInt8]) {
        guard let session else { return }
        let streamID = stream.streamID
        stream.responseBody = body
        let rc: Int32 = encoder.withFields { fields, count in
            if body.isEmpty {
                return nghttp2_submit_response(session, streamID, fields, count, nil)
            }
            var provider = nghttp2_data_provider()
            provider.read_callback = serverReadBody
            return nghttp2_submit_response(session, streamID, fields, count, &provider)
        }
        if rc != 0 {
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_INTERNAL_ERROR.rawValue)
        }
        transport?.scheduleFlush()
    }

    func reset(streamID: Int32, errorCode: UInt32) {
        if !loop.inEventLoop {
            loop.execute { self.reset(streamID: streamID, errorCode: errorCode) }
            return
        }
        guard let session, let stream = streams[streamID], !stream.responded else { return }
        stream.responded = true
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode)
        transport?.scheduleFlush()
    }

    /// Adds `:status`: the statuses APNs answers with as static text, others formatted.
    private func addStatus(_ status: Int) {
        let text: StaticString
        switch status {
        case 200: text = "200"
        case 400: text = "400"
        case 403: text = "403"
        case 404: text = "404"
        case 405: text = "405"
        case 410: text = "410"
        case 413: text = "413"
        case 429: text = "429"
        case 500: text = "500"
        case 503: text = "503"
        default:
            encoder.add(":status", String(status), neverIndex: false)
            return
        }
        encoder.add(":status", text, neverIndex: false)
    }

    // MARK: - Requests (called from nghttp2 callbacks)

    /// Most closed streams kept for reuse: a stream object and its header and body buffers serve request after
    /// request instead of being allocated and freed for each.
    static let maximumSpareStreams = 256

    /// Opens stream `id` (the current one from now on): a spare object when there is one, else a new one.
    func openStream(_ id: Int32) {
        let stream: ServerStream
        if let spare = spareStreams.popLast() {
            spare.reuse(streamID: id)
            stream = spare
        } else {
            stream = ServerStream(streamID: id)
        }
        streams.insert(stream)
        currentStream = Unmanaged.passUnretained(stream)
    }

    /// Forgets stream `id` and keeps its object as a spare.
    func closeStream(_ id: Int32) {
        guard let stream = streams.remove(id) else { return }
        if currentStream?.toOpaque() == Unmanaged.passUnretained(stream).toOpaque() { currentStream = nil }
        if spareStreams.count < Self.maximumSpareStreams { spareStreams.append(stream) }
    }

    /// Appends a received header field to stream `id`'s request. The current stream's (every field of a request
    /// but its trailers) costs no reference counting.
    func receiveField(streamID id: Int32, name: UnsafePointer<UInt8>, nameLength: Int, value: UnsafePointer<UInt8>,
                      valueLength: Int) {
        if let current = currentStream,
           current._withUnsafeGuaranteedRef({ stream in
               guard stream.streamID == id else { return false }
               stream.fields.append(name: name, nameLength: nameLength, value: value, valueLength: valueLength)
               return true
           })
        {
            return
        }
        stream(id)?.fields.append(name: name, nameLength: nameLength, value: value, valueLength: valueLength)
    }

    func stream(_ id: Int32) -> ServerStream? {
        if let current = currentStream?.takeUnretainedValue(), current.streamID == id { return current }
        let found = streams[id]
        currentStream = found.map { Unmanaged.passUnretained($0) }
        return found
    }

    func didReceiveRequest(_ stream: ServerStream) {
        if let last = goAwaySentLastStreamID, stream.streamID > last {
            stream.abandoned = true
            return
        }
        requestsReceived += 1
        if let limit = configuration.goAwayAfterStreams, requestsReceived == limit, let session, goAwaySentLastStreamID == nil {
            _ = session
            submitGoAway(lastStreamID: stream.streamID, errorCode: 0, debugData: configuration.goAwayDebugData)
        }
        guard let handler else { return }
        // The stream's buffers are lent to the request and taken back (moves, no reference counting); a handler
        // that keeps them shares them, and the stream then starts the next request with new ones.
        var request = HTTP2ServerRequest(fields: HTTP2RawHeaderBlock(), body: [], streamID: stream.streamID,
                                         connection: self)
        swap(&request.fields, &stream.fields)
        swap(&request.body, &stream.body)
        handler(request, HTTP2ServerResponder(connection: self, streamID: stream.streamID))
        swap(&request.fields, &stream.fields)
        swap(&request.body, &stream.body)
    }

    func markClosed() {
        closed = true
        handler = nil
        closedFlag.store(true, ordering: .relaxed)
        server?.connectionDidClose(self)
    }
}

/// Server-side state of one stream (loop-thread only). Reused for later streams of its connection
/// (``HTTP2ServerConnection/openStream(_:)``), with its buffers.
final class ServerStream {
    /// A reused stream keeps a body buffer up to this capacity; a larger one is released.
    static let maximumKeptBodyCapacity = 16 * 1024

    private(set) var streamID: Int32
    /// Every header field received, pseudo-headers first, as bytes.
    var fields = HTTP2RawHeaderBlock()
    var body: [UInt8] = []
    var responseBody: [UInt8] = []
    var responseOffset = 0
    var responded = false
    var abandoned = false

    init(streamID: Int32) { self.streamID = streamID }

    /// Clears the previous request for stream `id`. The header and body buffers keep their capacity when the handler
    /// no longer holds them (otherwise the next request gets new ones, as a new stream would).
    func reuse(streamID id: Int32) {
        streamID = id
        fields.removeAll()
        if body.capacity > Self.maximumKeptBodyCapacity { body = [] } else { body.removeAll(keepingCapacity: true) }
        responseBody = []
        responseOffset = 0
        responded = false
        abandoned = false
    }
}
