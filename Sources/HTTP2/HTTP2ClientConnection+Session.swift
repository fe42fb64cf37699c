@preconcurrency import Glibc
internal import CNGHTTP2
package import TLS
internal import Runtime

// MARK: - Transport delegate: session setup, input, output, close

extension HTTP2ClientConnection: TLSTransportDelegate {
    package func transportDidBecomeActive() {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, clientOnFrameRecv)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, clientOnHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, clientOnDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, clientOnStreamClose)
        var newSession: OpaquePointer?
        var mem = allocator.mem
        let result = nghttp2_session_client_new3(&newSession, callbacks, Unmanaged.passUnretained(self).toOpaque(),
                                                 nil, &mem)
        guard result == 0, let newSession else {
            if let transport { closeTransport(transport, for: HTTP2Error(.protocolError, reason: nghttp2ErrorText(Int(result)))) }
            return
        }
        session = newSession
        if configuration.firstStreamID > 1 { nghttp2_session_set_next_stream_id(newSession, configuration.firstStreamID) }
        // SETTINGS_NO_RFC7540_PRIORITIES (RFC 9218): no RFC 7540 dependency tree, so nghttp2 neither maintains one
        // over the connection's hundreds of streams nor keeps closed streams around for it (every push opens one).
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES.rawValue), value: 1),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: 1000),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                                   value: UInt32(clamping: configuration.initialWindowSize)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: UInt32(clamping: configuration.maximumResponseSize)),
        ]
        nghttp2_submit_settings(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        nghttp2_session_set_local_window_size(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0,
                                              Int32(clamping: configuration.initialWindowSize))
        lastReadTime = HTTP2Deadline.now().uptimeNanoseconds
        schedulePingTimer()
    }

    package func transportDidRead(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let session else { return false }
        lastReadTime = HTTP2Deadline.now().uptimeNanoseconds
        let consumed = nghttp2_session_mem_recv(session, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                bytes.count)
        if consumed < 0 {
            if closeError == nil { closeError = HTTP2Error(.protocolError, reason: nghttp2ErrorText(consumed)) }
            return false
        }
        return true
    }

    package func transportProduceOutput(into buffer: inout [UInt8]) {
        guard let session else { return }
        drainQueue()
        while true {
            var data: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(session, &data)
            if length < 0 {
                closeError = HTTP2Error(.protocolError, reason: nghttp2ErrorText(length))
                transport?.scheduleFlush()
                return
            }
            if length == 0 { break }
            buffer.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
        }
        publishCounters()
    }

    package func transportShouldClose() -> Bool {
        if closeError != nil { return true }
        guard let session else { return false }
        if goAwayReceived && streams.isEmpty { return true }
        return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0
    }

    package func transportDidClose(error: TLSError) {
        let error = HTTP2Error(error)
        if shouldTryNextAddress(after: error) {
            transport?.delegate = nil
            transport = nil
            connectNextAddress()
            return
        }
        if error.code == .connectFailed && !connectFailures.isEmpty {
            finishClose(HTTP2Error(.connectFailed, reason: connectFailures.joined(separator: "; ")))
            return
        }
        finishClose(closeError ?? error)
    }

    /// Closes `transport`, the connection failing with `error` (the transport's own close reason does not replace it).
    func closeTransport(_ transport: TLSTransport, for error: HTTP2Error) {
        if closeError == nil { closeError = error }
        transport.close(error: TLSError(.connectionClosed, reason: error.reason))
    }

    /// Answers everything and releases the session. Never called from inside an nghttp2 callback.
    func finishClose(_ error: HTTP2Error) {
        guard localState != .closed else { return }
        if closeError == nil { closeError = error }
        let error = closeError!
        connectTimer?.cancel()
        sweepTimer?.cancel()
        pingTimer?.cancel()
        if let ready = readyCallback {
            readyCallback = nil
            ready(.failure(error))
        }
        let queued = queue.takeAll()
        let active = streams.takeAll()
        let waiters = pings
        pings.removeAll()
        setState(.closed)
        publishCounters()
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        transport?.delegate = nil
        transport = nil
        stateHandler = nil
        for stream in queued {
            stream.completed(.failure(HTTP2Error(.notProcessed, reason: "connection closed before send: \(error.reason)")))
        }
        for stream in active {
            let retriable = goAwayReceived && stream.streamID > receivedLastStreamID
            stream.completed(.failure(retriable
                ? HTTP2Error(.notProcessed, reason: "above GOAWAY last-stream-id")
                : HTTP2Error(error.code == .shutdown ? .connectionClosed : error.code, reason: error.reason)))
        }
        for (_, waiter) in waiters {
            waiter.timer.cancel()
            waiter.completion?(.failure(error))
        }
    }

    // MARK: - Frame handlers (called from nghttp2 callbacks)

    func didReceiveSettings() {
        guard let session else { return }
        let remote = Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
        setLimit(min(remote, configuration.maxConcurrentStreams))
        if localState == .connecting {
            connectTimer?.cancel()
            connectTimer = nil
            setState(.ready)
            if let ready = readyCallback {
                readyCallback = nil
                ready(.success(self))
            }
        }
        transport?.scheduleFlush()
    }

    func didReceiveGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: [UInt8]) {
        goAwayReceived = true
        receivedLastStreamID = min(receivedLastStreamID, lastStreamID)
        let text = String(decoding: debugData, as: UTF8.self)
        logger.debug("received GOAWAY", metadata: ["h2.last_stream_id": "\(lastStreamID)",
                                                   "h2.error_code": "\(errorCode)", "h2.debug": text])
        let queued = queue.takeAll()
        setState(.goingAway)
        publishCounters()
        for stream in queued {
            stream.completed(.failure(HTTP2Error(.notProcessed, reason: "GOAWAY before send: \(text)", errorCode: errorCode)))
        }
        transport?.scheduleFlush()
    }

    /// The connection has opened its stream with ``HTTP2ClientConfiguration/retirementStreamID``: it goes away on
    /// its own (GOAWAY sent, queued requests handed back as `notProcessed`), and closes once its open streams finish
    /// (nghttp2 then neither wants to read nor to write).
    func retireForStreamIDs(session: OpaquePointer) {
        logger.info("HTTP/2 connection retires: its stream ids are nearly used up",
                    metadata: ["h2.next_stream_id": "\(nghttp2_session_get_next_stream_id(session))"])
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 0, nil, 0)
        let queued = queue.takeAll()
        setState(.goingAway)
        publishCounters()
        for stream in queued {
            stream.completed(.failure(HTTP2Error(.notProcessed, reason: "connection retired: stream ids used up")))
        }
        transport?.scheduleFlush()
    }

    /// Counts `count` more bytes of `stream`'s response (header fields or body); false, with the connection's close
    /// error set, once the response passes ``HTTP2ClientConfiguration/maximumResponseSize``: the callback then fails
    /// and nghttp2 ends the session, so a peer that floods one answer costs its connection, not the client's memory.
    func admitResponseBytes(_ count: Int, of stream: HTTP2ClientStream) -> Bool {
        stream.responseBytes += count
        guard stream.responseBytes > configuration.maximumResponseSize else { return true }
        if closeError == nil {
            closeError = HTTP2Error(.protocolError,
                                    reason: "response on stream \(stream.streamID) over \(configuration.maximumResponseSize) bytes")
        }
        return false
    }

    func didCloseStream(_ stream: HTTP2ClientStream, errorCode: UInt32) {
        guard streams.remove(stream) else { return }
        let streamID = stream.streamID
        let result: Result<HTTP2Response, HTTP2Error>
        if errorCode == 0 && stream.status > 0 {
            // Move the buffers out (the stream dies right after): no retain/release, no copy-on-write later.
            var headers = HTTP2RawHeaderBlock()
            swap(&headers, &stream.headers)
            var body: [UInt8] = []
            swap(&body, &stream.responseBody)
            result = .success(HTTP2Response(status: stream.status, rawHeaders: headers, body: body, streamID: streamID))
        } else if goAwayReceived && streamID > receivedLastStreamID {
            result = .failure(HTTP2Error(.notProcessed, reason: "stream above GOAWAY last-stream-id \(receivedLastStreamID)",
                                         errorCode: errorCode))
        } else if errorCode != 0 {
            let text = String(cString: nghttp2_http2_strerror(errorCode))
            result = .failure(HTTP2Error(.streamReset, reason: text, errorCode: errorCode))
        } else {
            result = .failure(HTTP2Error(goAwayReceived ? .goAway : .protocolError, reason: "stream closed without a response"))
        }
        if !queue.isEmpty { transport?.scheduleFlush() }
        stream.completed(result)
    }

    // MARK: - PING

    func sendPing(timeout: Duration, completion: (@Sendable (Result<Duration, HTTP2Error>) -> Void)?) {
        guard let session, localState != .closed, localState != .connecting else {
            completion?(.failure(closeError ?? HTTP2Error(.connectionClosed, reason: "not connected")))
            return
        }
        let id = nextPingID
        nextPingID &+= 1
        var opaque = id.bigEndian
        let rc = withUnsafeBytes(of: &opaque) { raw in
            nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        if rc != 0 {
            completion?(.failure(HTTP2Error(.protocolError, reason: nghttp2ErrorText(Int(rc)))))
            return
        }
        let timer = loop.schedule(at: .after(timeout)) { [self] in
            guard pings.removeValue(forKey: id) != nil else { return }
            closeError = HTTP2Error(.pingTimeout, reason: "no PING ACK within \(timeout)")
            if let transport { closeTransport(transport, for: closeError!) }
            // completion is answered by finishClose through `pings`? It was removed above, so answer here.
            completion?(.failure(closeError!))
        }
        pings[id] = PingWaiter(sentAt: HTTP2Deadline.now().uptimeNanoseconds, timer: timer, completion: completion)
        transport?.scheduleFlush()
    }

    func didReceivePingAck(_ opaque: UInt64) {
        guard let waiter = pings.removeValue(forKey: opaque) else { return }
        waiter.timer.cancel()
        let elapsed = HTTP2Deadline.now().uptimeNanoseconds &- waiter.sentAt
        waiter.completion?(.success(.nanoseconds(Int64(elapsed))))
    }

    func schedulePingTimer() {
        guard let interval = configuration.pingInterval else { return }
        pingTimer = loop.schedule(at: .after(interval)) { [self] in
            pingTimer = nil
            guard localState != .closed else { return }
            let idle = HTTP2Deadline.now().uptimeNanoseconds &- lastReadTime
            if idle >= UInt64(interval.nanoseconds) && pings.isEmpty {
                sendPing(timeout: configuration.pingTimeout, completion: nil)
            }
            schedulePingTimer()
        }
    }
}

// MARK: - nghttp2 callbacks (non-capturing; `user_data` is the unretained connection, which owns the session)

private func clientConnection(_ userData: UnsafeMutableRawPointer?) -> HTTP2ClientConnection {
    Unmanaged<HTTP2ClientConnection>.fromOpaque(userData!).takeUnretainedValue()
}

/// The `HTTP2ClientStream` set as stream user data at submit, or nil (unknown stream, or dropped by a deadline).
private func clientStream(_ session: OpaquePointer?, _ streamID: Int32) -> HTTP2ClientStream? {
    guard let session, let pointer = nghttp2_session_get_stream_user_data(session, streamID) else { return nil }
    return Unmanaged<HTTP2ClientStream>.fromOpaque(pointer).takeUnretainedValue()
}

/// Calls `body` with the stream of `streamID` without retaining it (`streams` keeps it alive for the whole call:
/// the header, data-chunk and body-read callbacks never remove streams). No-op for unknown streams.
private func withClientStream(_ session: OpaquePointer?, _ streamID: Int32, _ body: (HTTP2ClientStream) -> Void) {
    guard let session, let pointer = nghttp2_session_get_stream_user_data(session, streamID) else { return }
    Unmanaged<HTTP2ClientStream>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
}

private let clientOnFrameRecv: nghttp2_on_frame_recv_callback = { _, frame, userData in
    guard let frame, userData != nil else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    let type = UInt32(frame.pointee.hd.type)
    // HEADERS and DATA (almost every frame) need nothing here: return before touching the connection.
    if type == NGHTTP2_HEADERS.rawValue || type == NGHTTP2_DATA.rawValue { return 0 }
    let connection = clientConnection(userData)
    let flags = frame.pointee.hd.flags
    switch type {
    case NGHTTP2_SETTINGS.rawValue:
        if flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 { connection.didReceiveSettings() }
    case NGHTTP2_GOAWAY.rawValue:
        let goaway = frame.pointee.goaway
        var debug: [UInt8] = []
        if let data = goaway.opaque_data, goaway.opaque_data_len > 0 {
            debug = Array(UnsafeBufferPointer(start: data, count: goaway.opaque_data_len))
        }
        connection.didReceiveGoAway(lastStreamID: goaway.last_stream_id, errorCode: goaway.error_code, debugData: debug)
    case NGHTTP2_PING.rawValue:
        if flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 {
            var value: UInt64 = 0
            withUnsafeMutableBytes(of: &value) { raw in
                withUnsafeBytes(of: frame.pointee.ping.opaque_data) { raw.copyMemory(from: $0) }
            }
            connection.didReceivePingAck(UInt64(bigEndian: value))
        }
    default:
        break
    }
    return 0
}

private let clientOnHeader: nghttp2_on_header_callback = { session, frame, name, nameLength, value, valueLength, _, userData in
    guard let frame, let name, let value, userData != nil else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    var result: Int32 = 0
    withClientStream(session, frame.pointee.hd.stream_id) { stream in
        if nameLength == 7 && name[0] == UInt8(ascii: ":") {
            // ":status"
            var status = 0
            for index in 0..<valueLength {
                let digit = Int(value[index]) - 48
                if digit < 0 || digit > 9 {
                    result = NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
                    return
                }
                status = status * 10 + digit
            }
            stream.status = status
            return
        }
        if nameLength == 0 || name[0] == UInt8(ascii: ":") { return }
        guard clientConnection(userData).admitResponseBytes(nameLength + valueLength, of: stream) else {
            result = NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
            return
        }
        stream.headers.append(name: name, nameLength: nameLength, value: value, valueLength: valueLength)
    }
    return result
}

private let clientOnDataChunk: nghttp2_on_data_chunk_recv_callback = { session, _, streamID, data, length, userData in
    guard let data, userData != nil else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    var result: Int32 = 0
    withClientStream(session, streamID) { stream in
        guard clientConnection(userData).admitResponseBytes(length, of: stream) else {
            result = NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
            return
        }
        stream.responseBody.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
    }
    return result
}

private let clientOnStreamClose: nghttp2_on_stream_close_callback = { session, streamID, errorCode, userData in
    guard userData != nil else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    guard let stream = clientStream(session, streamID) else { return 0 }
    clientConnection(userData).didCloseStream(stream, errorCode: errorCode)
    return 0
}

/// Copies the request body of `streamID` into nghttp2's DATA frame buffer.
let clientReadBody: nghttp2_data_source_read_callback = { session, streamID, buffer, length, flags, _, userData in
    guard let buffer, let flags, userData != nil else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
    var result = Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    withClientStream(session, streamID) { stream in
        let bodySize = stream.http2Request.body.count
        let count = min(bodySize - stream.bodyOffset, length)
        if count > 0 {
            stream.http2Request.body.withUnsafeBufferPointer { source in
                buffer.update(from: source.baseAddress! + stream.bodyOffset, count: count)
            }
            stream.bodyOffset += count
        }
        if stream.bodyOffset >= bodySize {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
        }
        result = count
    }
    return result
}
