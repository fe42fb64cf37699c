@testable import APNs
import Foundation
import Testing

@Suite struct APNsIDTests {
    static let uuid = "8d7f0a52-3c1e-4b6a-9f00-123456789abc"

    /// Every byte of a canonical UUID replaced by dashes, digits, letters in and out of the hex range, a space and
    /// non-ASCII bytes: only hex digits (either case) where digits go and dashes where dashes go are read.
    @Test func canonicalUUIDsAtEveryPosition() {
        let uuid = Array(Self.uuid.utf8)
        let dashes: Set = [8, 13, 18, 23]
        for position in uuid.indices {
            for value in Array("-09afgAFG z".utf8) + [0, 0x7f, 0xff] {
                var bytes = uuid
                bytes[position] = value
                let expected = dashes.contains(position)
                    ? value == UInt8(ascii: "-")
                    : (48...57).contains(value) || (97...102).contains(value) || (65...70).contains(value)
                let id = bytes.withUnsafeBufferPointer { APNsID(utf8: $0) }
                #expect((id != nil) == expected, "byte \(value) at \(position)")
                if let id { #expect(id.description == String(decoding: bytes, as: UTF8.self).lowercased()) }
            }
        }
        #expect(APNsID(String(Self.uuid.dropLast())) == nil)
        #expect(APNsID(Self.uuid + "0") == nil)
        #expect(APNsID("") == nil)
    }

    /// The text written is the UUID's, lowercase, for ids of every digit (Foundation's `UUID` as the reference).
    @Test func textRoundTripsThroughFoundation() throws {
        for _ in 0..<200 {
            let reference = UUID()
            let id = try #require(APNsID(reference.uuidString))
            #expect(id.description == reference.uuidString.lowercased())
            #expect(APNsID(id.description) == id)
            #expect(UUID(uuidString: id.description) == reference)
        }
        #expect(APNsID(Self.uuid.uppercased()) == APNsID(Self.uuid))
        #expect(APNsID("00000000-0000-0000-0000-000000000000")?.description == "00000000-0000-0000-0000-000000000000")
        #expect(APNsID("ffffffff-ffff-ffff-ffff-ffffffffffff")?.description == "ffffffff-ffff-ffff-ffff-ffffffffffff")
    }
}
