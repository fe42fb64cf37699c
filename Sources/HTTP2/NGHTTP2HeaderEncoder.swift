internal import CNGHTTP2

/// Builds `nghttp2_nv` arrays in a reusable scratch buffer (one per connection, loop-thread only), so submitting a
/// response allocates nothing in steady state. Fields are kept as offsets into the buffer, which grows as needed, and
/// become pointers only in ``withFields(_:)``. nghttp2 copies names and values on submit, so the scratch is reused at
/// once.
final class NGHTTP2HeaderEncoder {
    private struct Field {
        var nameOffset: Int
        var nameLength: Int
        var valueOffset: Int
        var valueLength: Int
        var flags: UInt8
    }

    private var bytes: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var used = 0
    private var fields: [Field] = []
    private var entries: [nghttp2_nv] = []

    init(capacity: Int = 4096) {
        self.capacity = capacity
        bytes = .allocate(capacity: capacity)
        fields.reserveCapacity(16)
        entries.reserveCapacity(16)
    }

    deinit { bytes.deallocate() }

    /// Starts a new header block.
    func begin() {
        used = 0
        fields.removeAll(keepingCapacity: true)
    }

    /// `count` bytes at the end of the scratch, growing it if needed; returns their offset.
    private func reserve(_ count: Int) -> Int {
        if capacity - used < count {
            let grown = max(used + count, capacity * 2)
            let replacement = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            replacement.update(from: bytes, count: used)
            bytes.deallocate()
            bytes = replacement
            capacity = grown
        }
        defer { used += count }
        return used
    }

    private func copy(_ string: String) -> (offset: Int, length: Int) {
        var string = string
        return string.withUTF8 { utf8 in
            let offset = reserve(utf8.count)
            if utf8.count > 0 { (bytes + offset).update(from: utf8.baseAddress!, count: utf8.count) }
            return (offset, utf8.count)
        }
    }

    private func copy(_ string: StaticString) -> (offset: Int, length: Int) {
        let offset = reserve(string.utf8CodeUnitCount)
        (bytes + offset).update(from: string.utf8Start, count: string.utf8CodeUnitCount)
        return (offset, string.utf8CodeUnitCount)
    }

    private static func flags(neverIndex: Bool) -> UInt8 {
        neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
    }

    /// Adds a field.
    func add(_ name: String, _ value: String, neverIndex: Bool = false) {
        let name = copy(name)
        let value = copy(value)
        fields.append(Field(nameOffset: name.offset, nameLength: name.length, valueOffset: value.offset,
                            valueLength: value.length, flags: Self.flags(neverIndex: neverIndex)))
    }

    /// Adds a field with a static name.
    func add(_ name: StaticString, _ value: String, neverIndex: Bool) {
        let name = copy(name)
        let value = copy(value)
        fields.append(Field(nameOffset: name.offset, nameLength: name.length, valueOffset: value.offset,
                            valueLength: value.length, flags: Self.flags(neverIndex: neverIndex)))
    }

    /// Adds a field whose value is `count` bytes that `fill` writes in place.
    func add(_ name: StaticString, valueCount count: Int, neverIndex: Bool,
             _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        let name = copy(name)
        let offset = reserve(count)
        fill(UnsafeMutableBufferPointer(start: bytes + offset, count: count))
        fields.append(Field(nameOffset: name.offset, nameLength: name.length, valueOffset: offset, valueLength: count,
                            flags: Self.flags(neverIndex: neverIndex)))
    }

    /// The fields added since ``begin()`` as `HTTP2Header`s (invalid UTF-8 repaired).
    var headers: [HTTP2Header] {
        fields.map { field in
            HTTP2Header(String(decoding: UnsafeBufferPointer(start: bytes + field.nameOffset, count: field.nameLength),
                               as: UTF8.self),
                        String(decoding: UnsafeBufferPointer(start: bytes + field.valueOffset, count: field.valueLength),
                               as: UTF8.self),
                        neverIndex: field.flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0)
        }
    }

    /// Calls `body` with the built array.
    func withFields<R>(_ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
        entries.removeAll(keepingCapacity: true)
        for field in fields {
            entries.append(nghttp2_nv(name: bytes + field.nameOffset, value: bytes + field.valueOffset,
                                      namelen: field.nameLength, valuelen: field.valueLength, flags: field.flags))
        }
        return entries.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}

/// `nghttp2_strerror` as a Swift string.
func nghttp2ErrorText(_ code: Int) -> String {
    String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: code)))
}
