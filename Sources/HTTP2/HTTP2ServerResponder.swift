/// Answers one request, once, from any thread and at any time (later calls and calls after the stream was reset
/// or the connection closed are ignored).
public struct HTTP2ServerResponder: Sendable {
    let connection: HTTP2ServerConnection
    let streamID: Int32

    /// Sends the response: HEADERS with `:status` and `headers`, then `body` (if any) with END_STREAM.
    public func respond(status: Int, headers: [HTTP2Header] = [], body: [UInt8] = []) {
        connection.respond(streamID: streamID, status: status, headers: headers, body: body)
    }

    /// Resets the stream with `errorCode` (e.g. 7 = REFUSED_STREAM) instead of answering.
    public func reset(errorCode: UInt32) {
        connection.reset(streamID: streamID, errorCode: errorCode)
    }
}
