import Foundation
import Testing
@testable import Worker

/// The writer's word-at-a-time string escaping against a byte-by-byte reference, and read back by two parsers.
@Suite struct JSONWriterTests {
    /// RFC 8259 escaping one byte at a time: quote, backslash and control characters escaped, the rest as it is.
    static func referenceEscaped(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
            case UInt8(ascii: "\n"): out += Array(#"\n"#.utf8)
            case UInt8(ascii: "\r"): out += Array(#"\r"#.utf8)
            case UInt8(ascii: "\t"): out += Array(#"\t"#.utf8)
            case ..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    static func written(_ text: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 16)
        writer.appendString(text)
        return writer.finish()
    }

    @Test func everySpecialCharacterAtEveryOffsetOfStringsAroundTheWordSize() throws {
        let specials: [String] = ["\"", "\\", "\n", "\r", "\t", "\u{01}", "\u{1F}", "é", "通", "😀", "\u{7F}"]
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 33] {
            for offset in 0...length {
                for special in specials {
                    var text = String(repeating: "x", count: length)
                    text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: offset))
                    let bytes = Self.written(text)
                    #expect(bytes == Self.referenceEscaped(Array(text.utf8)), "\(special.debugDescription) at \(offset) of \(length)")
                    let decoded = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) as? String
                    #expect(decoded == text)
                }
            }
        }
    }

    @Test func randomStringsMatchTheReference() {
        var random = SplitMix64(seed: 0x3517_E5C4)
        let pieces: [String] = ["a", "Z", " ", "\"", "\\", "\n", "\u{00}", "\u{1B}", "é", "通话", "😀", "/", "~", "\u{7F}"]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &random)
            let text = (0..<count).map { _ in pieces.randomElement(using: &random)! }.joined()
            #expect(Self.written(text) == Self.referenceEscaped(Array(text.utf8)), "\(text.debugDescription)")
        }
    }
}
