import Telemetry

/// A minimal, fast JSON writer into a byte buffer, for the fixed payload and record shapes.
///
/// Strings are escaped per RFC 8259 (quote, backslash and control characters); everything else is written
/// as UTF-8 unchanged. The caller is responsible for the structure (commas, braces).
///
/// It writes into a buffer, growing it when needed, and ``finish()`` hands out an array of exactly the bytes written:
/// each append is a capacity check and a copy, cheaper than an `Array` append (some 30 appends per event for payload
/// and receipt). ``bytes(capacity:_:)`` starts it on the stack, so the array is the one allocation of a text that
/// fits. Non-copyable: one owner frees the buffer.
package struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// Whether `base` was allocated by the writer (not a scratch buffer lent to it).
    private var ownsBase: Bool

    package init(capacity: Int = 512) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
        ownsBase = true
    }

    private init(scratch: UnsafeMutableBufferPointer<UInt8>) {
        base = scratch.baseAddress!
        capacity = scratch.count
        ownsBase = false
    }

    /// The bytes `body` writes, written into `capacity` bytes on the stack first (a heap buffer if they outgrow it).
    package static func bytes(capacity: Int, _ body: (inout JSONWriter) -> Void) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(16, capacity)) { scratch in
            var writer = JSONWriter(scratch: scratch)
            body(&writer)
            return writer.finish()
        }
    }

    deinit { if ownsBase { base.deallocate() } }

    /// The bytes written, as an array of exactly their size.
    package consuming func finish() -> [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toAtLeast: count + extra) }
    }

    private mutating func grow(toAtLeast needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: base, count: count)
        if ownsBase { base.deallocate() }
        base = grown
        ownsBase = true
        capacity = newCapacity
    }

    @inline(__always)
    package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    package mutating func appendByte(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends ASCII text verbatim (structural fragments such as `{"aps":`).
    @inline(__always)
    package mutating func appendLiteral(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package mutating func appendRaw(_ raw: [UInt8]) {
        raw.withUnsafeBufferPointer { append($0) }
    }

    /// Appends `value` as a quoted, escaped JSON string.
    mutating func appendString(_ value: String) {
        value.withUTF8InPlace { appendEscaped($0) }
    }

    /// Appends the string `span` finds in `text` as a quoted JSON string: the bytes as they stand when it has no escape
    /// (they then need none: the scanner let no quote, backslash or control character through), else decoded and
    /// escaped as ``appendString(_:)`` does. Either way the bytes are the ones ``appendString(_:)`` writes.
    mutating func appendString(_ span: JSONSpan, of text: [UInt8]) {
        guard !span.isEscaped else { return appendString(span.string(in: text)) }
        appendQuoted(count: Int(span.count)) { target in
            text.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[span.range])) }
        }
    }

    /// Appends a quoted string of `count` bytes that `fill` writes in place (it must write all of them, and none that
    /// needs escaping): text made on the spot, such as an id's, without a `String` for it.
    mutating func appendQuoted(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        reserve(count + 2)
        base[self.count] = UInt8(ascii: "\"")
        fill(UnsafeMutableRawBufferPointer(start: base + self.count + 1, count: count))
        base[self.count + 1 + count] = UInt8(ascii: "\"")
        self.count += count + 2
    }

    /// Appends `value` as ``appendString(_:)`` does, or `null` when it is nil.
    mutating func appendStringOrNull(_ value: String?) {
        if let value { appendString(value) } else { appendLiteral("null") }
    }

    /// Appends `value` as ``appendInt(_:)`` does, or `null` when it is nil.
    mutating func appendIntOrNull(_ value: Int64?) {
        if let value { appendInt(value) } else { appendLiteral("null") }
    }

    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count + 2)
        appendByte(UInt8(ascii: "\""))
        var start = 0
        var index = 0
        while true {
            // Plain bytes eight at a time, as the scanner reads strings.
            index = JSONScanner.skipPlainWords(utf8, from: index, wordTail: true)
            guard index < utf8.count else { break }
            let byte = utf8[index]
            let at = index
            index += 1
            // Not ASCII: written as it is.
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if start < at { append(UnsafeBufferPointer(rebasing: utf8[start..<at])) }
            start = index
            appendByte(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): appendByte(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): appendByte(UInt8(ascii: "\\"))
            case UInt8(ascii: "\n"): appendByte(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): appendByte(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): appendByte(UInt8(ascii: "t"))
            default:
                appendLiteral("u00")
                appendByte(Self.hexDigit(byte >> 4))
                appendByte(Self.hexDigit(byte & 0xF))
            }
        }
        if start < utf8.count { append(UnsafeBufferPointer(rebasing: utf8[start...])) }
        appendByte(UInt8(ascii: "\""))
    }

    /// Appends a decimal integer.
    package mutating func appendInt(_ value: Int64) {
        reserve(20)
        if value < 0 { appendByte(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 1
        var scale: UInt64 = 10
        while digits < 20, magnitude >= scale {
            digits += 1
            scale = scale &* 10
        }
        for position in stride(from: count + digits - 1, through: count, by: -1) {
            base[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        }
        count += digits
    }

    /// Appends `,` unless this is the first member; `first` is reset.
    @inline(__always)
    mutating func appendSeparator(_ first: inout Bool) {
        if first { first = false } else { appendByte(UInt8(ascii: ",")) }
    }

    @inline(__always)
    package static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
