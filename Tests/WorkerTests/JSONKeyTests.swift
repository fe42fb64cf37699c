@testable import Worker
import Testing

/// Key matching as the decoder uses it, at every key length its word loads distinguish (under 4, 4–7, 8–16 bytes).
@Suite struct JSONKeyTests {
    static let literals: [StaticString] = [
        "", "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijkl",
        "ring_timeout_s", "abcdefghijklmnop",
    ]

    @Test(arguments: literals.indices) func equalsOnlyTheSameBytes(index: Int) {
        let literal = Self.literals[index]
        let bytes = Array(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        func matches(_ key: [UInt8]) -> (raw: Bool, decoded: Bool) {
            (key.withUnsafeBufferPointer { JSONKey(raw: $0).equals(literal) }, JSONKey(decoded: key).equals(literal))
        }
        #expect(matches(bytes) == (true, true))
        for position in bytes.indices {
            var changed = bytes
            changed[position] ^= 0x01
            #expect(matches(changed) == (false, false), "byte \(position) of \(literal)")
        }
        #expect(matches(bytes + [UInt8(ascii: "x")]) == (false, false))
        if !bytes.isEmpty { #expect(matches(Array(bytes.dropLast())) == (false, false)) }
    }
}
