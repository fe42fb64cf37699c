package import HTTP2
/// Answers one request, once, from any thread and at any time (later calls and calls after the stream was reset
/// or the connection closed are ignored).
package struct HTTP2ServerResponder: Sendable {
    let connection: HTTP2ServerConnection
    let streamID: Int32

    /// Sends the response: HEADERS with `:status` and `headers`, then `body` (if any) with END_STREAM.
    package func respond(status: Int, headers: [HTTP2Header] = [], body: [UInt8] = []) {
        connection.respond(streamID: streamID, status: status, headers: headers, body: body)
    }

    /// Sends the response: HEADERS with `:status` and the fields `fields` writes, then `body` (if any) with
    /// END_STREAM. On the connection's loop thread the fields go straight into its header encoder (no `HTTP2Header`,
    /// no `String` for values written in place); `fields` runs before this returns, on any thread.
    package func respond(status: Int, body: [UInt8] = [], fields: (HTTP2HeaderWriter) -> Void) {
        connection.respond(streamID: streamID, status: status, body: body, fields: fields)
    }

    /// Resets the stream with `errorCode` (e.g. 7 = REFUSED_STREAM) instead of answering.
    package func reset(errorCode: UInt32) {
        connection.reset(streamID: streamID, errorCode: errorCode)
    }
}
