/// Received header fields as raw bytes: for each field a 4-byte little-endian name length, a 4-byte value length,
/// then the name and value bytes, in one `ManagedBuffer` allocation. Appending is a bounds check and two `memcpy`s
/// (no `String` is built); strings are made only when a field is read.
///
/// - Important: `@unchecked Sendable`: the bytes are appended only on the loop thread while the stream is open;
///   the block is immutable once handed out in an `HTTP2Response`.
struct HTTP2RawHeaderBlock: @unchecked Sendable {
    /// The byte store; its header holds the bytes used and the requested capacity (kept here instead of reading
    /// `ManagedBuffer.capacity`, which asks the allocator on every call).
    final class HeaderBytes: ManagedBuffer<HeaderBytes.Counts, UInt8> {
        struct Counts {
            var used: Int
            var capacity: Int
        }
    }

    private var storage: HeaderBytes?

    var isEmpty: Bool { (storage?.header.used ?? 0) == 0 }

    mutating func append(name: UnsafePointer<UInt8>, nameLength: Int, value: UnsafePointer<UInt8>, valueLength: Int) {
        let needed = 8 + nameLength + valueLength
        let used = storage?.header.used ?? 0
        if storage == nil || storage!.header.capacity - used < needed {
            let capacity = max(256, (used + needed) * 2)
            let grown = HeaderBytes.create(minimumCapacity: capacity) { _ in HeaderBytes.Counts(used: used, capacity: capacity) }
            if let old = storage {
                grown.withUnsafeMutablePointerToElements { target in
                    old.withUnsafeMutablePointerToElements { source in target.update(from: source, count: used) }
                }
            }
            storage = unsafeDowncast(grown, to: HeaderBytes.self)
        }
        storage!.withUnsafeMutablePointers { counts, elements in
            let start = elements + counts.pointee.used
            let raw = UnsafeMutableRawPointer(start)
            raw.storeBytes(of: UInt32(truncatingIfNeeded: nameLength).littleEndian, as: UInt32.self)
            raw.storeBytes(of: UInt32(truncatingIfNeeded: valueLength).littleEndian, toByteOffset: 4, as: UInt32.self)
            (start + 8).update(from: name, count: nameLength)
            (start + 8 + nameLength).update(from: value, count: valueLength)
            counts.pointee.used += needed
        }
    }

    /// Calls `body` with (name, value) byte ranges of each field in order until it returns false.
    func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        guard let storage else { return }
        storage.withUnsafeMutablePointers { counts, elements in
            let base = UnsafePointer(elements)
            let total = counts.pointee.used
            var offset = 0
            while offset + 8 <= total {
                let nameLength = Self.readLength(base + offset)
                let valueLength = Self.readLength(base + offset + 4)
                let nameStart = offset + 8
                let valueStart = nameStart + nameLength
                guard valueStart + valueLength <= total else { return }
                let name = UnsafeBufferPointer(start: base + nameStart, count: nameLength)
                let value = UnsafeBufferPointer(start: base + valueStart, count: valueLength)
                if !body(name, value) { return }
                offset = valueStart + valueLength
            }
        }
    }

    private static func readLength(_ pointer: UnsafePointer<UInt8>) -> Int {
        Int(pointer[0]) | Int(pointer[1]) << 8 | Int(pointer[2]) << 16 | Int(pointer[3]) << 24
    }

    /// Every field as `HTTP2Header` (invalid UTF-8 is repaired, as `String(decoding:as:)` does).
    func decoded() -> [HTTP2Header] {
        var result: [HTTP2Header] = []
        forEachField { name, value in
            result.append(HTTP2Header(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            return true
        }
        return result
    }

    /// The value of the first field whose name bytes equal `name`'s UTF-8.
    func first(name: String) -> String? {
        var found: String?
        var name = name
        name.withUTF8 { wanted in
            forEachField { fieldName, value in
                guard fieldName.count == wanted.count,
                      fieldName.elementsEqual(wanted) else { return true }
                found = String(decoding: value, as: UTF8.self)
                return false
            }
        }
        return found
    }
}
