import Foundation
import Testing
@testable import Worker

/// The fast decoder against Foundation's JSONSerialization: same input → same value or same reason.
@Suite struct CallEventDecoderOracleTests {
    static let seeds: [String] = [
        Fixtures.eventJSON(),
        Fixtures.eventJSON(type: "hangup", push: "voip"),
        Fixtures.eventJSON(extra: #","alert":{"title":"Al\u00efce \ud83d\udcde","body":"x\ny"},"category":"C","sound":"ring.caf""#),
        Fixtures.eventJSON(extra: #","custom":{"room":{"id":7,"tags":["a",null,true,-1.5e3]},"s":"\"","n":0}"#),
        " \n{ \"created_at\" : 5 , \"ring_timeout_s\" : 10.0 , \"environment\":\"sandbox\",\"topic\":\"t\",\"push\":\"alert\","
            + "\"device_token\":\"\(Fixtures.token)\",\"call_id\":\"c\",\"type\":\"missed\",\"event_id\":\"e\" } \t",
    ]

    @Test(arguments: seeds)
    func seedsAgreeWithOracle(text: String) {
        let bytes = Array(text.utf8)
        let fast = ReferenceEventDecoder.fast(bytes)
        #expect(fast == ReferenceEventDecoder.decode(bytes))
        if case .failure(let code) = fast { Issue.record("seed rejected: \(code)") }
    }

    /// Foundation accepts trailing commas (`[1,]`, `{"a":1,}`); RFC 8259 and this decoder do not.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        var lastSignificant: UInt8 = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case 0x20, 0x0A, 0x0D, 0x09: continue
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if lastSignificant == UInt8(ascii: ",") { return true }
            case UInt8(ascii: "\""): inString = true
            default: break
            }
            lastSignificant = byte
        }
        return false
    }

    @Test func mutatedInputsNeverCrashAndAgreeWithOracle() {
        var random = SplitMix64(seed: 0xC411_9054)
        let alphabet = Array("{}[]\":,\\u0123456789abcdefABCDEF-+.eEtrunlsf \n\t/".utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF, 0xED]
        var agreed = 0, accepted = 0, divergencesAllowed = 0
        for iteration in 0..<4000 {
            var bytes = Array(Self.seeds[iteration % Self.seeds.count].utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                guard !bytes.isEmpty else { break }
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
                case 2: bytes[position] = alphabet.randomElement(using: &random)!
                case 3: bytes.removeSubrange(position...)
                default:
                    let end = min(bytes.count, position + Int.random(in: 1...12, using: &random))
                    bytes.insert(contentsOf: bytes[position..<end], at: position)
                }
            }
            let fast = ReferenceEventDecoder.fast(bytes)
            let oracle = ReferenceEventDecoder.decode(bytes)
            if fast == oracle {
                agreed += 1
                if case .event = fast { accepted += 1 }
                continue
            }
            if fast == .failure("invalid_json"), Self.hasTrailingComma(bytes) {
                divergencesAllowed += 1
                continue
            }
            Issue.record("disagree on \(String(decoding: bytes, as: UTF8.self).debugDescription): fast \(fast), oracle \(oracle)")
        }
        #expect(agreed + divergencesAllowed == 4000)
        #expect(accepted > 50, "the fuzz corpus should still reach accepted events")
    }
}
