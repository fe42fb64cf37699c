@testable import APNs
import Testing

/// Device tokens of every accepted length, kept in the value (up to 64 digits) or in an array (longer): the same
/// digits, path, equality and hash either way.
@Suite struct DeviceTokenTests {
    /// `count` hex digits, mixed case, from a fixed pattern.
    static func digits(_ count: Int) -> String {
        "0123456789abcdefABCDEF".strided(count: count)
    }

    @Test func everyAcceptedLengthKeepsItsLowercaseDigitsAndPath() throws {
        for count in stride(from: DeviceToken.minimumHexDigits, through: DeviceToken.maximumHexDigits, by: 2) {
            let text = Self.digits(count)
            let token = try DeviceToken(text)
            #expect(token.hex == text.lowercased(), "\(count) digits")
            #expect(token.path == "/3/device/" + text.lowercased(), "\(count) digits")
            #expect(token.pathCount == token.path.utf8.count)
            #expect(token == (try DeviceToken(text.lowercased())), "\(count) digits: the case does not matter")
            #expect(token.hashValue == (try DeviceToken(text.uppercased())).hashValue)
            #expect(token.masked == "\(text.lowercased().prefix(4))…\(text.lowercased().suffix(4))")
        }
    }

    @Test func tokensDifferingInOneDigitOrInLengthDiffer() throws {
        let base = Self.digits(64)
        let token = try DeviceToken(base)
        var changed = Array(base.lowercased().utf8)
        changed[63] = changed[63] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        #expect(token != (try DeviceToken(String(decoding: changed, as: UTF8.self))))
        #expect(token != (try DeviceToken(String(base.prefix(62)))), "a prefix of it")
        #expect(token != (try DeviceToken(base + "00")), "it followed by zeros: the long form")
        #expect(try DeviceToken(base + "00") == (try DeviceToken(base.uppercased() + "00")))
    }

    @Test func implausibleTokensAreRejected() {
        for bad in ["", "0123456789abcde", String(repeating: "0", count: 202), "0123456789abcdeg", "0123456789abcdé"] {
            #expect(throws: APNsRequestError.self, "\(bad.count) characters") { try DeviceToken(bad) }
        }
    }
}

private extension String {
    /// `count` characters taken from this string's characters at a stride of 7, round and round.
    func strided(count: Int) -> String {
        let characters = Array(self)
        return String((0..<count).map { characters[($0 * 7) % characters.count] })
    }
}
