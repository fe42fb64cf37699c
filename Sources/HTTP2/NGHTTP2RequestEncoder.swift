internal import CNGHTTP2

/// Builds the `nghttp2_nv` array of a client request in a reusable scratch buffer (one per connection, loop-thread
/// only), so submitting a request allocates nothing in steady state. nghttp2 copies names and values on submit, so
/// the scratch is reused at once.
///
/// The encoded request is cached: when the next request has the same method, scheme, authority and header fields
/// (the common case: one topic, one push type), only `:path` is rewritten, and when the path is the same too the
/// array is reused as is. Comparisons are `==` on the strings and the header array, which return at once when the
/// storage is shared (the usual case for a repeated request) and compare contents otherwise, so a cache hit is
/// always exact.
final class NGHTTP2RequestEncoder {
    private var bytes: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes used by everything except `:path` (which is always last in the scratch).
    private var fixedUsed = 0
    private var fields: [nghttp2_nv] = []
    private static let pathIndex = 3

    // The cache key (valid when `cached` is true).
    private var cached = false
    private var method = ""
    private var scheme = ""
    private var authority = ""
    private var path = ""
    private var neverIndexPath = false
    private var headers: [HTTP2Header] = []

    init() {
        capacity = 4096
        bytes = .allocate(capacity: capacity)
        fields.reserveCapacity(16)
    }

    deinit { bytes.deallocate() }

    /// Encodes `request` (reusing the previous encoding where it is the same) and calls `body` with the array.
    func withFields<R>(of request: HTTP2Request, _ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
        if !(cached && request.method == method && request.scheme == scheme && request.authority == authority
             && request.neverIndexPath == neverIndexPath && request.headers == headers) {
            encodeAll(request)
        } else if request.path != path {
            encodePath(request)
        }
        return fields.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }

    private func encodeAll(_ request: HTTP2Request) {
        var estimate = request.method.utf8.count + request.path.utf8.count + request.authority.utf8.count
            + request.scheme.utf8.count + 32
        for header in request.headers { estimate += header.name.utf8.count + header.value.utf8.count }
        if estimate > capacity {
            bytes.deallocate()
            capacity = max(estimate, capacity * 2)
            bytes = .allocate(capacity: capacity)
        }
        var used = 0
        fields.removeAll(keepingCapacity: true)
        add(":method", request.method, neverIndex: false, used: &used)
        add(":scheme", request.scheme, neverIndex: false, used: &used)
        add(":authority", request.authority, neverIndex: false, used: &used)
        add(":path", "", neverIndex: false, used: &used)  // placeholder at `pathIndex`, filled by `encodePath`
        for header in request.headers { add(header.name, header.value, neverIndex: header.neverIndex, used: &used) }
        fixedUsed = used
        method = request.method
        scheme = request.scheme
        authority = request.authority
        neverIndexPath = request.neverIndexPath
        headers = request.headers
        cached = true
        encodePath(request)
    }

    private func encodePath(_ request: HTTP2Request) {
        let length = request.path.utf8.count
        if fixedUsed + length > capacity {
            // Grow and re-encode everything (the old field pointers die with the old buffer).
            cached = false
            capacity = max(fixedUsed + length, capacity * 2)
            bytes.deallocate()
            bytes = .allocate(capacity: capacity)
            encodeAll(request)
            return
        }
        var used = fixedUsed
        let value = copy(request.path, used: &used)
        let flags = request.neverIndexPath ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
        fields[Self.pathIndex].value = value.0
        fields[Self.pathIndex].valuelen = value.1
        fields[Self.pathIndex].flags = flags
        path = request.path
    }

    private func copy(_ string: String, used: inout Int) -> (UnsafeMutablePointer<UInt8>, Int) {
        var string = string
        let start = bytes + used
        let count = string.withUTF8 { utf8 in
            if utf8.count > 0 { start.update(from: utf8.baseAddress!, count: utf8.count) }
            return utf8.count
        }
        used += count
        return (start, count)
    }

    private func add(_ name: String, _ value: String, neverIndex: Bool, used: inout Int) {
        let (namePointer, nameLength) = copy(name, used: &used)
        let (valuePointer, valueLength) = copy(value, used: &used)
        let flags = neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
        fields.append(nghttp2_nv(name: namePointer, value: valuePointer, namelen: nameLength, valuelen: valueLength,
                                 flags: flags))
    }
}
