import Testing
@testable import Worker

/// The backlog scan's probe never hides a stop event from the decoder: whenever an input decodes to a stop type, the
/// probe says it may be one (seeds, escaped type names, and thousands of mutations of them); and it says no for
/// plain incoming calls, which is what makes the scan cheap.
@Suite struct StopTypeProbeTests {
    static let decoder = CallEventDecoder()

    static func decodesToAStop(_ bytes: [UInt8]) -> Bool {
        (try? decoder.decode(bytes))?.type.stopsRinging ?? false
    }

    @Test func stopTypesAndEscapedNamesAreFoundIncomingCallsAreNot() {
        for type in ["hangup", "missed", "answered_elsewhere"] {
            #expect(StopTypeProbe.mayStopRinging(Array(Fixtures.eventJSON(type: type).utf8)), "\(type)")
        }
        #expect(!StopTypeProbe.mayStopRinging(Array(Fixtures.eventJSON().utf8)))
        #expect(!StopTypeProbe.mayStopRinging(Array(Fixtures.eventJSON(push: "voip").utf8)))
        let escaped = Array(Fixtures.eventJSON(type: #"\u0068angup"#).utf8)
        #expect(Self.decodesToAStop(escaped), "the decoder reads an escaped type name")
        #expect(StopTypeProbe.mayStopRinging(escaped))
    }

    /// Inputs that end inside what the probe looks for: it reads no byte past the end and finds nothing.
    @Test func inputsCutShortAreNotStops() {
        for text in ["", "\\", "{\"type\":\"", "{\"type\":\"hangup", "{\"type\":\"hang", "\"missed", "abc\\"] {
            #expect(!StopTypeProbe.mayStopRinging(Array(text.utf8)), "\(text)")
        }
        #expect(StopTypeProbe.mayStopRinging(Array(#""missed""#.utf8)))
        #expect(StopTypeProbe.mayStopRinging(Array(#"\u"#.utf8)))
    }

    @Test func noMutatedInputDecodesToAStopThatTheProbeMissed() {
        var random = SplitMix64(seed: 0x5709_7E5E)
        let seeds = CallEventDecoderOracleTests.seeds + [Fixtures.eventJSON(type: "answered_elsewhere"), Fixtures.eventJSON(type: #"mi\u0073sed"#)]
        let alphabet = Array("{}\":,\\u0123456789abcdefhgimnpsw_ \n".utf8)
        var stops = 0
        for iteration in 0..<5000 {
            var bytes = Array(seeds[iteration % seeds.count].utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
                default: bytes[position] = alphabet.randomElement(using: &random)!
                }
            }
            guard Self.decodesToAStop(bytes) else { continue }
            stops += 1
            #expect(StopTypeProbe.mayStopRinging(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(stops > 300, "enough mutated stop events decoded to mean something: \(stops)")
    }
}
