/// A complete response received on an `HTTP2ClientConnection`.
///
/// Received header fields are kept as the raw bytes nghttp2 delivered; `headers` decodes them into `HTTP2Header`
/// strings on each read. Hot paths that need one field should use `header(_:)`, which compares bytes and builds a
/// single string.
public struct HTTP2Response: Sendable {
    /// The `:status` value.
    package var status: Int
    /// The response body.
    package var body: [UInt8]
    /// The HTTP/2 stream id the response arrived on.
    package var streamID: Int32
    private var storage: Storage

    private enum Storage: Sendable {
        case decoded([HTTP2Header])
        case raw(HTTP2RawHeaderBlock)
    }

    init(status: Int, headers: [HTTP2Header] = [], body: [UInt8] = [], streamID: Int32 = 0) {
        self.status = status
        self.storage = .decoded(headers)
        self.body = body
        self.streamID = streamID
    }

    init(status: Int, rawHeaders: HTTP2RawHeaderBlock, body: [UInt8], streamID: Int32) {
        self.status = status
        self.storage = .raw(rawHeaders)
        self.body = body
        self.streamID = streamID
    }

    /// Response header fields (no pseudo-headers), in arrival order.
    package var headers: [HTTP2Header] {
        get {
            switch storage {
            case .decoded(let headers): return headers
            case .raw(let block): return block.decoded()
            }
        }
        set { storage = .decoded(newValue) }
    }

    /// Calls `body` with the name and value bytes of every header field, in arrival order, without building strings
    /// (for answers read on a hot path).
    package func forEachHeaderField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        switch storage {
        case .raw(let block):
            block.forEachField { name, value in
                body(name, value)
                return true
            }
        case .decoded(let headers):
            for header in headers {
                Array(header.name.utf8).withUnsafeBufferPointer { name in
                    Array(header.value.utf8).withUnsafeBufferPointer { value in body(name, value) }
                }
            }
        }
    }

    /// The value of the first header field called `name` (lowercase), or `nil`. Does not decode the other fields.
    func header(_ name: String) -> String? {
        switch storage {
        case .decoded(let headers): return headers.first(name: name)
        case .raw(let block): return block.first(name: name)
        }
    }
}
