import Telemetry

/// Received header fields as raw bytes: for each field a 4-byte little-endian name length, a 4-byte value length,
/// then the name and value bytes, in one byte array. Appending is a capacity check and two copies (no `String` is
/// built); strings are made only when a field is read as one. A server request's block holds its pseudo-header
/// fields too (first, as HTTP/2 sends them); a client response's holds only regular fields.
///
/// A block is a value: a server stream empties its block and reuses the allocation for the next request, and when a
/// block handed out earlier (in an `HTTP2Response` or `HTTP2ServerRequest`) still shares the bytes, the next append
/// copies them first (copy on write), so a handed-out block never changes.
package struct HTTP2RawHeaderBlock: Sendable {
    /// The byte store, zero-filled up to its capacity and written in place (an array has no cheap "append
    /// uninitialized"); only the first ``used`` bytes are fields.
    @usableFromInline var bytes: [UInt8] = []
    @usableFromInline var used = 0

    package init() {}

    /// A block holding `headers` in order.
    package init(_ headers: [HTTP2Header]) {
        for header in headers { append(name: header.name, value: header.value) }
    }

    var isEmpty: Bool { used == 0 }

    mutating func append(name: String, value: String) {
        name.withUTF8InPlace { name in
            value.withUTF8InPlace { value in
                let empty = UInt8(0)
                withUnsafePointer(to: empty) { placeholder in
                    append(name: name.baseAddress ?? placeholder, nameLength: name.count,
                           value: value.baseAddress ?? placeholder, valueLength: value.count)
                }
            }
        }
    }

    package mutating func append(name: UnsafePointer<UInt8>, nameLength: Int, value: UnsafePointer<UInt8>, valueLength: Int) {
        let needed = 8 + nameLength + valueLength
        let start = used
        if bytes.count - start < needed {
            let count = max(256, (start + needed) * 2)
            // A client stream's block starts empty for every response: one zeroed allocation, not an empty array
            // grown by appending a zeroed one.
            if bytes.isEmpty {
                bytes = [UInt8](repeating: 0, count: count)
            } else {
                bytes += [UInt8](repeating: 0, count: count - bytes.count)
            }
        }
        bytes.withUnsafeMutableBufferPointer { elements in
            let target = elements.baseAddress! + start
            let raw = UnsafeMutableRawPointer(target)
            raw.storeBytes(of: UInt32(truncatingIfNeeded: nameLength).littleEndian, as: UInt32.self)
            raw.storeBytes(of: UInt32(truncatingIfNeeded: valueLength).littleEndian, toByteOffset: 4, as: UInt32.self)
            Self.copy(name, nameLength, to: target + 8)
            Self.copy(value, valueLength, to: target + 8 + nameLength)
        }
        used = start + needed
    }

    /// Copies `count` bytes; most header names and values are short, and two overlapping 8-byte moves beat a call to
    /// `memcpy` there.
    private static func copy(_ source: UnsafePointer<UInt8>, _ count: Int, to target: UnsafeMutablePointer<UInt8>) {
        if count >= 8 && count <= 16 {
            let from = UnsafeRawPointer(source)
            let to = UnsafeMutableRawPointer(target)
            let head = from.loadUnaligned(as: UInt64.self)
            let tail = from.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        } else if count < 8 {
            for index in 0..<count { target[index] = source[index] }
        } else {
            target.update(from: source, count: count)
        }
    }

    /// Empties the block for reuse, keeping its allocation.
    package mutating func removeAll() {
        used = 0
    }

    /// The fields' bytes for the duration of a ``withFields(_:)`` call: a sequence of (name, value) byte ranges in
    /// arrival order.
    package struct Fields: Sequence {
        @usableFromInline let base: UnsafePointer<UInt8>?
        @usableFromInline let count: Int

        @inlinable init(base: UnsafePointer<UInt8>?, count: Int) {
            self.base = base
            self.count = count
        }

        package struct Iterator: IteratorProtocol {
            @usableFromInline let base: UnsafePointer<UInt8>?
            @usableFromInline let count: Int
            @usableFromInline var offset = 0

            @inlinable init(base: UnsafePointer<UInt8>?, count: Int) {
                self.base = base
                self.count = count
            }

            @inlinable package mutating func next() -> (name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)? {
                guard let base, offset + 8 <= count else { return nil }
                let nameLength = HTTP2RawHeaderBlock.readLength(base + offset)
                let valueLength = HTTP2RawHeaderBlock.readLength(base + offset + 4)
                let nameStart = offset + 8
                let valueStart = nameStart + nameLength
                guard valueStart + valueLength <= count else { return nil }
                offset = valueStart + valueLength
                return (UnsafeBufferPointer(start: base + nameStart, count: nameLength),
                        UnsafeBufferPointer(start: base + valueStart, count: valueLength))
            }
        }

        @inlinable package func makeIterator() -> Iterator { Iterator(base: base, count: count) }
    }

    /// Calls `body` with (name, value) byte ranges of each field in order until it returns false.
    func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        withFields { fields in
            for (name, value) in fields where !body(name, value) { return }
        }
    }

    /// Calls `body` with the fields' bytes, valid only during the call.
    @inlinable package func withFields<R>(_ body: (Fields) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer { elements in
            try body(Fields(base: elements.baseAddress, count: used))
        }
    }

    @inlinable static func readLength(_ pointer: UnsafePointer<UInt8>) -> Int {
        Int(UInt32(littleEndian: UnsafeRawPointer(pointer).loadUnaligned(as: UInt32.self)))
    }

    static func isPseudoHeader(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        name.first == UInt8(ascii: ":")
    }

    /// Every regular field (pseudo-header fields are skipped) as `HTTP2Header` (invalid UTF-8 is repaired, as
    /// `String(decoding:as:)` does).
    package func decoded() -> [HTTP2Header] {
        withFields { fields in
            var result: [HTTP2Header] = []
            for (name, value) in fields where !Self.isPseudoHeader(name) {
                result.append(HTTP2Header(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            }
            return result
        }
    }

    /// The value of the first field whose name bytes equal `name`'s UTF-8 (a pseudo-header's too, such as
    /// `":path"`).
    package func first(name: String) -> String? {
        name.withUTF8InPlace { wanted in
            withFields { fields in
                for (fieldName, value) in fields where fieldName.count == wanted.count && fieldName.elementsEqual(wanted) {
                    return String(decoding: value, as: UTF8.self)
                }
                return nil
            }
        }
    }
}
