import Testing

@testable import Crypto

@Suite struct Base64URLTests {
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(plain) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func usesURLSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
        #expect(Base64URL.encode(Array(#"{"alg":"ES256","kid":"ABC123DEFG"}"#.utf8))
            == "eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ")
    }

    @Test func rejectsInvalidInput() {
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("ab/c") == nil)
        #expect(Base64URL.decode("ab c") == nil)
        #expect(Base64URL.decode("Zg==") == [0x66])
    }

    @Test func roundTripsAllLengths() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<100 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }
}
