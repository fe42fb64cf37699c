internal import CNGHTTP2

/// Builds `nghttp2_nv` arrays in a reusable scratch buffer (one per connection, loop-thread only), so submitting a
/// request allocates nothing in steady state. nghttp2 copies names and values on submit, so the scratch is reused
/// at once.
final class NGHTTP2HeaderEncoder {
    private var bytes: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var used = 0
    private var fields: [nghttp2_nv] = []

    init() {
        capacity = 4096
        bytes = .allocate(capacity: capacity)
        fields.reserveCapacity(16)
    }

    deinit { bytes.deallocate() }

    /// Starts a new header block. `estimatedBytes` is the sum of name and value lengths.
    func begin(estimatedBytes: Int) {
        used = 0
        fields.removeAll(keepingCapacity: true)
        if estimatedBytes > capacity {
            bytes.deallocate()
            capacity = max(estimatedBytes, capacity * 2)
            bytes = .allocate(capacity: capacity)
        }
    }

    private func copy(_ string: String) -> (UnsafeMutablePointer<UInt8>, Int) {
        var string = string
        return string.withUTF8 { utf8 in
            let start = bytes + used
            if utf8.count > 0 { start.update(from: utf8.baseAddress!, count: utf8.count) }
            used += utf8.count
            return (start, utf8.count)
        }
    }

    /// Adds a field. `begin` must have reserved enough bytes.
    func add(_ name: String, _ value: String, neverIndex: Bool = false) {
        let (namePointer, nameLength) = copy(name)
        let (valuePointer, valueLength) = copy(value)
        let flags = neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
        fields.append(nghttp2_nv(name: namePointer, value: valuePointer, namelen: nameLength, valuelen: valueLength,
                                 flags: flags))
    }

    /// Calls `body` with the built array.
    func withFields<R>(_ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
        fields.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}

/// `nghttp2_strerror` as a Swift string.
func nghttp2ErrorText(_ code: Int) -> String {
    String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: code)))
}
