public import Runtime

/// One request on an ``HTTP2ClientConnection``, from submission to its one completion: what to send, when to give
/// up, and the stream's state while it is on the wire.
///
/// A caller that keeps an object per request subclasses it, so that object is the stream: the APNs pool's pushes are
/// (and so are the worker's in-flight events), and nothing is wrapped or copied per request. ``completed(_:)`` runs
/// exactly once per submission, on the connection's loop thread, after the connection has done with the stream; a
/// completed stream may be submitted again (a re-send), on any connection.
///
/// - Important: `@unchecked Sendable`: one owner at a time. The submitter sets ``http2Request`` and ``deadline`` and
///   then hands the stream to ``HTTP2ClientConnection/submit(_:)`` (the connection's inbox lock or loop queue orders
///   that hand-over); from there the stream state is the loop's alone until ``completed(_:)``.
open class HTTP2ClientStream: @unchecked Sendable {
    /// What to send. The connection reads it (the body while nghttp2 sends it) until the stream ends.
    package var http2Request: HTTP2Request
    /// When to give up (`timeout`); ``HTTP2Deadline/distantFuture``: never.
    package var deadline: HTTP2Deadline
    var streamID: Int32 = 0
    /// Index in `ActiveStreams` while on the wire, else -1.
    var slot = -1
    /// Bytes of the request body nghttp2 has taken so far.
    var bodyOffset = 0
    var status = 0
    var headers = HTTP2RawHeaderBlock()
    var responseBody: [UInt8] = []
    /// Bytes of response header fields and body received so far.
    var responseBytes = 0

    public init(_ request: HTTP2Request, deadline: HTTP2Deadline = .distantFuture) {
        http2Request = request
        self.deadline = deadline
    }

    /// The response, or why there is none (check ``HTTP2Error/isRetriable``). Subclasses override it.
    open func completed(_ result: Result<HTTP2Response, HTTP2Error>) {}

    /// Whether the stream writes its header fields itself (``writeHeaderFields(_:)``) instead of sending
    /// ``http2Request``'s `headers`. Default false.
    open var writesHeaderFields: Bool { false }

    /// Writes the header fields that follow the pseudo-headers when ``writesHeaderFields`` is true: a subclass that
    /// keeps its fields' values writes them straight into the connection's encoder, with no `HTTP2Header` array made
    /// per request (loop thread).
    open func writeHeaderFields(_ writer: HTTP2HeaderWriter) {}

    /// Writes `:path` when ``writesHeaderFields`` is true: ``http2Request``'s `path`, unless a subclass writes it from
    /// what it keeps (no `String` per request). The other pseudo-headers come from ``http2Request``.
    open func writePath(_ writer: HTTP2HeaderWriter) {
        writer.add(":path", http2Request.path, neverIndex: http2Request.neverIndexPath)
    }

    /// Clears what an earlier submission left (loop thread, before the stream goes on the wire again).
    func prepareForWire() {
        streamID = 0
        bodyOffset = 0
        status = 0
        responseBytes = 0
        if !headers.isEmpty { headers = HTTP2RawHeaderBlock() }
        if !responseBody.isEmpty { responseBody = [] }
    }
}
