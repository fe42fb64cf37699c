package import CNGHTTP2
import Telemetry

/// Builds `nghttp2_nv` arrays in a reusable scratch buffer (one per connection, loop-thread only), so submitting a
/// response, or a request whose stream writes its own header fields, allocates nothing in steady state. The buffer grows as needed (the entries already built are moved
/// with it). nghttp2 copies names and values on submit, so the scratch is reused at once.
package final class NGHTTP2HeaderEncoder {
    private var bytes: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var used = 0
    /// The `nghttp2_nv` entries, `entryCount` of `entryCapacity` in use: a buffer of its own rather than an array,
    /// whose uniqueness and bounds checks cost more than the entry itself (about twelve per request).
    private var entries: UnsafeMutablePointer<nghttp2_nv>
    private var entryCount = 0
    private var entryCapacity = 16

    package init(capacity: Int = 4096) {
        self.capacity = capacity
        bytes = .allocate(capacity: capacity)
        entries = .allocate(capacity: entryCapacity)
    }

    deinit {
        bytes.deallocate()
        entries.deallocate()
    }

    /// Starts a new header block.
    package func begin() {
        used = 0
        entryCount = 0
    }

    private func append(_ entry: nghttp2_nv) {
        if entryCount == entryCapacity {
            let grown = UnsafeMutablePointer<nghttp2_nv>.allocate(capacity: entryCapacity * 2)
            grown.moveInitialize(from: entries, count: entryCount)
            entries.deallocate()
            entries = grown
            entryCapacity *= 2
        }
        (entries + entryCount).initialize(to: entry)
        entryCount += 1
    }

    /// `count` bytes at the end of the scratch, growing it if needed.
    @inline(__always)
    private func reserve(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - used < count { grow(by: count) }
        defer { used += count }
        return bytes + used
    }

    /// Makes room for `count` more bytes: a larger scratch, the bytes so far and the entries' pointers moved to it.
    private func grow(by count: Int) {
        let grown = max(used + count, capacity * 2)
        let replacement = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        replacement.update(from: bytes, count: used)
        // Entries pointing into the scratch move with it; those pointing at static strings stay.
        func moved(_ pointer: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
            pointer >= bytes && pointer <= bytes + used ? replacement + (pointer - bytes) : pointer
        }
        for index in 0..<entryCount {
            entries[index].name = moved(entries[index].name)
            entries[index].value = moved(entries[index].value)
        }
        bytes.deallocate()
        bytes = replacement
        capacity = grown
    }

    private func copy(_ string: String) -> (UnsafeMutablePointer<UInt8>, Int) {
        string.withUTF8InPlace { place($0) }
    }

    private func place(_ utf8: UnsafeBufferPointer<UInt8>) -> (UnsafeMutablePointer<UInt8>, Int) {
        let target = reserve(utf8.count)
        if utf8.count > 0 { target.update(from: utf8.baseAddress!, count: utf8.count) }
        return (target, utf8.count)
    }

    private static func flags(neverIndex: Bool) -> UInt8 {
        neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
    }

    /// Adds a field.
    package func add(_ name: String, _ value: String, neverIndex: Bool = false) {
        let name = copy(name)
        let value = copy(value)
        append(nghttp2_nv(name: name.0, value: value.0, namelen: name.1, valuelen: value.1,
                                  flags: Self.flags(neverIndex: neverIndex)))
    }

    /// A static string's bytes, used in place: static strings live as long as the program, so nghttp2 is told not
    /// to copy them either (``noCopyName``, ``noCopyValue``; static names are lowercase, as that requires).
    private static func bytes(_ string: StaticString) -> (UnsafeMutablePointer<UInt8>, Int) {
        (UnsafeMutablePointer(mutating: string.utf8Start), string.utf8CodeUnitCount)
    }

    private static let noCopyName = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue)
    private static let noCopyValue = UInt8(NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)

    /// Adds a field with a static (lowercase) name.
    func add(_ name: StaticString, _ value: String, neverIndex: Bool) {
        let name = Self.bytes(name)
        let value = copy(value)
        append(nghttp2_nv(name: name.0, value: value.0, namelen: name.1, valuelen: value.1,
                                  flags: Self.flags(neverIndex: neverIndex) | Self.noCopyName))
    }

    /// Adds a field with a static (lowercase) name and a static value.
    package func add(_ name: StaticString, _ value: StaticString, neverIndex: Bool) {
        let name = Self.bytes(name)
        let value = Self.bytes(value)
        append(nghttp2_nv(name: name.0, value: value.0, namelen: name.1, valuelen: value.1,
                                  flags: Self.flags(neverIndex: neverIndex) | Self.noCopyName | Self.noCopyValue))
    }

    /// The static names of ``HTTP2HeaderWriter/Indexing/perResponse`` fields already sent indexed once.
    private var indexedNames: [UnsafeMutablePointer<UInt8>] = []

    /// Adds a field with a static (lowercase) name whose value is `count` bytes that `fill` writes in place.
    func add(_ name: StaticString, valueCount count: Int, indexing: HTTP2HeaderWriter.Indexing,
             _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        let name = Self.bytes(name)
        let value = reserve(count)
        fill(UnsafeMutableBufferPointer(start: value, count: count))
        var neverIndex: Bool
        switch indexing {
        case .allowed: neverIndex = false
        case .never: neverIndex = true
        case .perResponse:
            // The first one on the connection is indexed; nghttp2 then sends the later ones as never-indexed
            // literals with an indexed name.
            neverIndex = indexedNames.contains(name.0)
            if !neverIndex { indexedNames.append(name.0) }
        }
        append(nghttp2_nv(name: name.0, value: value, namelen: name.1, valuelen: count,
                                  flags: Self.flags(neverIndex: neverIndex) | Self.noCopyName))
    }

    /// The fields added since ``begin()`` as `HTTP2Header`s (invalid UTF-8 repaired).
    package var headers: [HTTP2Header] {
        UnsafeBufferPointer(start: entries, count: entryCount).map { entry in
            HTTP2Header(String(decoding: UnsafeBufferPointer(start: entry.name, count: entry.namelen), as: UTF8.self),
                        String(decoding: UnsafeBufferPointer(start: entry.value, count: entry.valuelen), as: UTF8.self),
                        neverIndex: entry.flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0)
        }
    }

    /// Calls `body` with the built array.
    package func withFields<R>(_ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
        body(entries, entryCount)
    }
}

/// `nghttp2_strerror` as a Swift string.
package func nghttp2ErrorText(_ code: Int) -> String {
    String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: code)))
}
