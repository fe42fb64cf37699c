/// Received header fields as raw bytes: for each field a 4-byte little-endian name length, a 4-byte value length,
/// then the name and value bytes. Appending is one array append per field (no `String` is built); strings are made
/// only when a field is read.
struct HTTP2RawHeaderBlock: Sendable {
    private(set) var bytes: [UInt8] = []

    var isEmpty: Bool { bytes.isEmpty }

    mutating func append(name: UnsafePointer<UInt8>, nameLength: Int, value: UnsafePointer<UInt8>, valueLength: Int) {
        if bytes.capacity == 0 { bytes.reserveCapacity(256) }
        let lengths = (UInt32(truncatingIfNeeded: nameLength).littleEndian,
                       UInt32(truncatingIfNeeded: valueLength).littleEndian)
        withUnsafeBytes(of: lengths) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: UnsafeBufferPointer(start: name, count: nameLength))
        bytes.append(contentsOf: UnsafeBufferPointer(start: value, count: valueLength))
    }

    /// Calls `body` with (name, value) byte ranges of each field in order until it returns false.
    private func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset + 8 <= buffer.count {
                let nameLength = Self.readLength(base + offset)
                let valueLength = Self.readLength(base + offset + 4)
                let nameStart = offset + 8
                let valueStart = nameStart + nameLength
                guard valueStart + valueLength <= buffer.count else { return }
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
