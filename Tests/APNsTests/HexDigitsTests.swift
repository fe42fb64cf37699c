@testable import APNs
import Testing

/// The byte checks behind every push's device token and apns-id, against plain per-character predicates.
@Suite struct HexDigitsTests {
    static func isHex(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (97...102).contains(byte) || (65...70).contains(byte)
    }

    /// 67 bytes: eight whole words and a three-byte tail.
    @Test func everyByteValueAtEveryPosition() {
        let base = Array("0123456789abcdef0123456789abcdef0123456789ABCDEF0123456789abcdef9aF".utf8)
        for position in base.indices {
            for value in UInt8.min...UInt8.max {
                var bytes = base
                bytes[position] = value
                let scanned = bytes.withUnsafeBufferPointer { HexDigits.scan($0) }
                #expect(scanned.allHex == bytes.allSatisfy(Self.isHex), "byte \(value) at \(position)")
                #expect(scanned.hasUppercase == bytes.contains { (65...70).contains($0) }, "byte \(value) at \(position)")
            }
        }
    }

    @Test func deviceTokensAreHexOnlyAndLowercased() throws {
        let lower = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
        #expect(try DeviceToken(lower).hex == lower)
        #expect(try DeviceToken(lower.uppercased()).hex == lower)
        for bad in ["0123456789abcdeg", "0123456789abcde ", "0123456789abcdé", "-123456789abcdef"] {
            #expect(throws: APNsRequestError.self) { try DeviceToken(bad) }
        }
    }
}
