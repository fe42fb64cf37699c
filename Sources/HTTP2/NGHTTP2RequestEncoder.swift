@preconcurrency import Glibc
internal import CNGHTTP2
import Telemetry

/// Builds the `nghttp2_nv` array of a client request in a reusable scratch buffer (one per connection, loop-thread
/// only), so submitting a request allocates nothing in steady state. nghttp2 copies names and values on submit, so
/// the scratch is reused at once.
///
/// The encoded request is cached: when the next request has the same method, scheme, authority and header fields,
/// only `:path` is rewritten (a copy is cheaper than a comparison); when only some header fields differ, the fields
/// before the first that differs are kept and the rest re-encoded. APNs requests differ from one another from
/// `apns-expiration` or `apns-collapse-id` on, while `authorization`, `apns-push-type`, `apns-topic` and
/// `apns-priority` before them stay the same, so re-encoding every field would redo that work per request.
/// Comparisons are on UTF-8 bytes (`String ==` would treat canonically
/// equivalent but different byte sequences as equal); a header array whose buffer is the cached one (the cache
/// holds it, so it cannot have changed or been reused) matches without looking at its elements.
///
/// A stream that writes its own header fields (``HTTP2ClientStream/writesHeaderFields``) gets a fresh encoding in a
/// second scratch instead: the pseudo-headers from its request, then its fields as it writes them.
final class NGHTTP2RequestEncoder {
    private let streamFields = NGHTTP2HeaderEncoder(capacity: 1024)
    private var bytes: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes used by everything except `:path` (which is always last in the scratch).
    private var fixedUsed = 0
    private var fields: [nghttp2_nv] = []
    /// Where each cached header field's bytes start in the scratch (its name, then its value).
    private var headerOffsets: [Int] = []
    private static let pathIndex = 3
    /// The index in `fields` of the first regular header field (after the four pseudo-headers).
    private static let firstHeaderIndex = 4

    // The cache key (valid when `cached` is true).
    private var cached = false
    private var method = ""
    private var scheme = ""
    private var authority = ""
    private var neverIndexPath = false
    private var headers: [HTTP2Header] = []

    init() {
        capacity = 4096
        bytes = .allocate(capacity: capacity)
        fields.reserveCapacity(16)
        headerOffsets.reserveCapacity(12)
    }

    deinit { bytes.deallocate() }

    /// Encodes `stream`'s request, with the header fields it writes itself if it does, and calls `body` with the array.
    func withFields<R>(of stream: HTTP2ClientStream, _ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
        guard stream.writesHeaderFields else { return withFields(of: stream.http2Request, body) }
        let request = stream.http2Request
        streamFields.begin()
        streamFields.add(":method" as StaticString, request.method, neverIndex: false)
        streamFields.add(":scheme" as StaticString, request.scheme, neverIndex: false)
        streamFields.add(":authority" as StaticString, request.authority, neverIndex: false)
        let writer = HTTP2HeaderWriter(encoder: streamFields)
        stream.writePath(writer)
        stream.writeHeaderFields(writer)
        return streamFields.withFields(body)
    }

    /// Encodes `request` (reusing the previous encoding where it is the same) and calls `body` with the array.
    func withFields<R>(of request: HTTP2Request, _ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
        if cached && request.neverIndexPath == neverIndexPath && Self.sameBytes(request.method, method)
            && Self.sameBytes(request.scheme, scheme) && Self.sameBytes(request.authority, authority) {
            if let first = Self.firstDifference(request.headers, headers) {
                encodeHeaders(request, from: first)
            } else {
                encodePath(request)
            }
        } else {
            encodeAll(request)
        }
        return fields.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }

    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        // One representation (the same storage, or the same small string): equal without reading the bytes. Most
        // fields of consecutive APNs requests are such copies (the provider token's value, literals, short topics).
        if unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self) { return true }
        let count = a.utf8.count
        if count != b.utf8.count { return false }
        if count == 0 { return true }
        let fast = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                memcmp(left.baseAddress!, right.baseAddress!, count) == 0
            }
        }
        if let fast, let result = fast { return result }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// The index of the first field of `a` that differs from `b`'s at that index (`b.count` when `a` only adds
    /// fields), nil when the two are the same.
    private static func firstDifference(_ a: [HTTP2Header], _ b: [HTTP2Header]) -> Int? {
        let shared = a.count == b.count && a.withUnsafeBufferPointer { left in
            b.withUnsafeBufferPointer { right in left.baseAddress == right.baseAddress }
        }
        if shared { return nil }
        for index in 0..<min(a.count, b.count) {
            if a[index].neverIndex != b[index].neverIndex || !sameBytes(a[index].name, b[index].name)
                || !sameBytes(a[index].value, b[index].value) { return index }
        }
        return a.count == b.count ? nil : min(a.count, b.count)
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
        method = request.method
        scheme = request.scheme
        authority = request.authority
        neverIndexPath = request.neverIndexPath
        headerOffsets.removeAll(keepingCapacity: true)
        addHeaders(request, from: 0, used: used)
    }

    /// Keeps the cached fields before header `first` and encodes the request's from there on (and `:path`).
    private func encodeHeaders(_ request: HTTP2Request, from first: Int) {
        let start = first < headerOffsets.count ? headerOffsets[first] : fixedUsed
        var estimate = start + request.path.utf8.count
        for header in request.headers[first...] { estimate += header.name.utf8.count + header.value.utf8.count }
        guard estimate <= capacity else {
            encodeAll(request)
            return
        }
        fields.removeSubrange((Self.firstHeaderIndex + first)...)
        headerOffsets.removeSubrange(first...)
        addHeaders(request, from: first, used: start)
    }

    /// Appends the request's header fields from index `first` at scratch offset `used`, caches them, then
    /// encodes `:path`.
    private func addHeaders(_ request: HTTP2Request, from first: Int, used start: Int) {
        var used = start
        for header in request.headers[first...] {
            headerOffsets.append(used)
            add(header.name, header.value, neverIndex: header.neverIndex, used: &used)
        }
        fixedUsed = used
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
    }

    private func copy(_ string: String, used: inout Int) -> (UnsafeMutablePointer<UInt8>, Int) {
        let start = bytes + used
        let place = { (utf8: UnsafeBufferPointer<UInt8>) -> Int in
            if utf8.count > 0 { start.update(from: utf8.baseAddress!, count: utf8.count) }
            return utf8.count
        }
        let count = string.withUTF8InPlace(place)
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
