@preconcurrency import Glibc
internal import CNGHTTP2
internal import HTTP2
package import TLS

extension HTTP2ServerConnection: TLSTransportDelegate {
    package func transportDidBecomeActive() {
        recordClientCertificate(transport?.verifiedClientCertificate)
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, serverOnBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, serverOnHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, serverOnDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, serverOnFrameRecv)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, serverOnStreamClose)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_no_closed_streams(option, 1)
        var newSession: OpaquePointer?
        var mem = allocator.mem
        let rc = nghttp2_session_server_new3(&newSession, callbacks, Unmanaged.passUnretained(self).toOpaque(), option,
                                             &mem)
        guard rc == 0, let newSession else {
            transport?.close(error: TLSError(.connectionClosed, reason: nghttp2ErrorText(Int(rc))))
            return
        }
        session = newSession
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: UInt32(clamping: configuration.maxConcurrentStreams)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                                   value: UInt32(clamping: configuration.initialWindowSize)),
        ]
        nghttp2_submit_settings(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        nghttp2_session_set_local_window_size(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0,
                                              Int32(clamping: configuration.initialWindowSize))
    }

    package func transportDidRead(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let session else { return false }
        let consumed = nghttp2_session_mem_recv(session, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                bytes.count)
        return consumed >= 0
    }

    package func transportProduceOutput(into buffer: inout [UInt8]) {
        guard let session else { return }
        while true {
            var data: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(session, &data)
            if length <= 0 { break }
            buffer.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
        }
    }

    package func transportShouldClose() -> Bool {
        guard let session else { return true }
        if let _ = goAwaySentLastStreamID, streams.all.allSatisfy({ $0.abandoned }) {
            return nghttp2_session_want_write(session) == 0
        }
        return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0
    }

    package func transportDidClose(error: TLSError) {
        guard !closed else { return }
        streams.removeAll()
        spareStreams.removeAll()
        currentStream = nil
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        transport?.delegate = nil
        transport = nil
        markClosed()
    }
}

// MARK: - nghttp2 callbacks (user_data: the unretained connection, which owns the session)

private func serverConnection(_ userData: UnsafeMutableRawPointer?) -> HTTP2ServerConnection {
    Unmanaged<HTTP2ServerConnection>.fromOpaque(userData!).takeUnretainedValue()
}

private let serverOnBeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
    guard let frame, userData != nil else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    if UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue
        && frame.pointee.headers.cat.rawValue == NGHTTP2_HCAT_REQUEST.rawValue
    {
        serverConnection(userData).openStream(frame.pointee.hd.stream_id)
    }
    return 0
}

private let serverOnHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
    guard let frame, let name, let value, let userData else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    Unmanaged<HTTP2ServerConnection>.fromOpaque(userData)._withUnsafeGuaranteedRef {
        $0.receiveField(streamID: frame.pointee.hd.stream_id, name: name, nameLength: nameLength, value: value,
                        valueLength: valueLength)
    }
    return 0
}

private let serverOnDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
    guard let data, userData != nil else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    serverConnection(userData).stream(streamID)?.body.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
    return 0
}

private let serverOnFrameRecv: nghttp2_on_frame_recv_callback = { _, frame, userData in
    guard let frame, userData != nil else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    let type = UInt32(frame.pointee.hd.type)
    guard type == NGHTTP2_HEADERS.rawValue || type == NGHTTP2_DATA.rawValue else { return 0 }
    guard frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 else { return 0 }
    let connection = serverConnection(userData)
    if let stream = connection.stream(frame.pointee.hd.stream_id) {
        connection.didReceiveRequest(stream)
    }
    return 0
}

private let serverOnStreamClose: nghttp2_on_stream_close_callback = { _, streamID, _, userData in
    guard userData != nil else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
    serverConnection(userData).closeStream(streamID)
    return 0
}

let serverReadBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
    guard let buffer, let flags, userData != nil else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
    guard let stream = serverConnection(userData).streams[streamID] else {
        return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    }
    let count = min(stream.responseBody.count - stream.responseOffset, length)
    if count > 0 {
        stream.responseBody.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + stream.responseOffset, count: count)
        }
        stream.responseOffset += count
    }
    if stream.responseOffset >= stream.responseBody.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
    return count
}
