import Testing
@testable import Worker

/// The scanner's word-at-a-time string scan against a byte-by-byte check.
@Suite struct JSONScannerTests {
    /// A byte the string scan must stop at: quote, backslash, control character, or not ASCII.
    static func needsLook(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80
    }

    static func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    @Test func everyByteValueAtEveryPositionOfAPlainWord() {
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[position] = UInt8(value)
                #expect(JSONScanner.needsByteScan(Self.word(bytes)) == Self.needsLook(UInt8(value)),
                        "byte \(value) at \(position)")
            }
        }
    }

    /// Random words, with the bytes around each boundary (0x1F/0x20, 0x21/0x22/0x23, 0x5B/0x5C/0x5D, 0x7F/0x80) and
    /// borrow-prone neighbours (0x00, 0x01) over-represented.
    @Test func randomWordsAgreeWithTheByteCheck() {
        var random = SplitMix64(seed: 0x5CA7_1234)
        let edges: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xFF, 0x41, 0x61]
        for _ in 0..<200_000 {
            let bytes = (0..<8).map { _ in
                Bool.random(using: &random) ? edges.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
            #expect(JSONScanner.needsByteScan(Self.word(bytes)) == bytes.contains(where: Self.needsLook), "\(bytes)")
            // The lowest flagged bit marks the first byte that needs a look (the scan and the writer jump there).
            let flagged = JSONScanner.flaggedBytes(Self.word(bytes))
            #expect((flagged == 0 ? nil : flagged.trailingZeroBitCount / 8) == bytes.firstIndex(where: Self.needsLook),
                    "\(bytes)")
        }
    }

    /// The skip with `wordTail` lands on the first byte that needs a look, or at the end, from any start, whatever the
    /// tail's length (its last one to seven bytes are read as one padded word); a buffer shorter than a word is left
    /// to the byte scan.
    @Test func skipLandsOnTheFirstSpecialByteOrTheEnd() {
        for length in 0...20 {
            for special: UInt8? in [nil, 0x00, 0x1F, UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x80, 0xFF] {
                for position in special == nil ? [0] : Array(0..<max(length, 1)) where length > 0 || special == nil {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    if let special { bytes[position] = special }
                    for start in 0...length {
                        let landed = bytes.withUnsafeBufferPointer { JSONScanner.skipPlainWords($0, from: start, wordTail: true) }
                        let expected = length < 8 ? start : bytes[start...].firstIndex(where: Self.needsLook) ?? length
                        #expect(landed == expected, "\(bytes) from \(start)")
                    }
                }
            }
        }
    }

    @Test func longStringsWithASpecialByteAtEveryOffsetDecodeAsTheByteScanDoes() throws {
        for length in [7, 8, 9, 15, 16, 17, 40] {
            for offset in 0..<length {
                for special: UInt8 in [0x01, UInt8(ascii: "\\"), 0xC3] {
                    var content = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                    content[offset] = special
                    if special == 0xC3 { content.insert(0xA9, at: offset + 1) }  // é, valid UTF-8
                    if special == UInt8(ascii: "\\") { content.insert(UInt8(ascii: "n"), at: offset + 1) }
                    let json = [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")]
                    let result: Result<String, JSONSyntaxError> = json.withUnsafeBufferPointer { buffer in
                        var scanner = JSONScanner(buffer: buffer, maximumDepth: 4)
                        do throws(JSONSyntaxError) { return .success(try scanner.readString()) } catch { return .failure(error) }
                    }
                    switch special {
                    case 0x01:
                        guard case .failure(let error) = result else {
                            Issue.record("control character accepted at \(offset) of \(length)")
                            continue
                        }
                        #expect(error.offset == offset + 1)
                    case UInt8(ascii: "\\"):
                        var expected = String(repeating: "x", count: length)
                        let at = expected.index(expected.startIndex, offsetBy: offset)
                        expected.replaceSubrange(at...at, with: "\n")
                        #expect(try result.get() == expected)
                    default:
                        var expected = String(repeating: "x", count: length)
                        let at = expected.index(expected.startIndex, offsetBy: offset)
                        expected.replaceSubrange(at...at, with: "é")
                        #expect(try result.get() == expected)
                    }
                }
            }
        }
    }
}
