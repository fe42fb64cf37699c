import Glibc

/// A string value of a JSON text, as the bytes between its quotes: the decoder notes where a string is instead of
/// making a `String` of it, so the text is read, compared or copied into another JSON text in place.
struct JSONSpan: Sendable, Equatable {
    /// Offset of the first byte after the opening quote.
    let start: Int32
    /// The bytes up to the closing quote.
    let count: Int32
    /// Whether those bytes hold an escape (`\n`, `\u00e9`, …): then they are not the string's UTF-8 as they stand.
    let isEscaped: Bool

    init(start: Int, count: Int, isEscaped: Bool) {
        self.start = Int32(truncatingIfNeeded: start)
        self.count = Int32(truncatingIfNeeded: count)
        self.isEscaped = isEscaped
    }

    var isEmpty: Bool { count == 0 }

    var range: Range<Int> { Int(start)..<Int(start) + Int(count) }

    /// The string, decoded from `text` (the JSON text the span was found in; the scanner validated it).
    func string(in text: [UInt8]) -> String {
        text.withUnsafeBufferPointer { buffer in
            let raw = UnsafeBufferPointer(rebasing: buffer[range])
            guard isEscaped else { return String(decoding: raw, as: UTF8.self) }
            var scanner = JSONScanner(buffer: buffer, maximumDepth: 1)
            scanner.index = Int(start) - 1
            return (try? scanner.readString()) ?? String(decoding: raw, as: UTF8.self)
        }
    }

    /// Whether the string is exactly `bytes`.
    func equals(_ bytes: [UInt8], in text: [UInt8]) -> Bool {
        guard isEscaped else {
            guard bytes.count == Int(count) else { return false }
            return count == 0 || text.withUnsafeBufferPointer { buffer in
                bytes.withUnsafeBufferPointer { memcmp(buffer.baseAddress! + Int(start), $0.baseAddress!, Int(count)) == 0 }
            }
        }
        return Array(string(in: text).utf8) == bytes
    }
}
