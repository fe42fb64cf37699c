@testable import APNs
@testable import HTTP2
import Testing

/// `APNsResult(response:)` reads the answer's raw header bytes on the event loop; it must give what
/// `APNsResult(status:headers:body:)` (Foundation's `lowercased()`, names compared case-insensitively) gives.
@Suite struct APNsResultResponseTests {
    static let requested = "1294465c-e2aa-4f25-9d3e-8bdb0e7d8a67"

    /// Answers' header fields: the echo as sent, uppercased, another id, values that are no UUID (shorter than a word,
    /// a multiple of eight, a tail, non-ASCII), uppercase names, near-miss names, no headers.
    static let answers: [[(String, String)]] = [
        [("apns-id", requested), ("apns-unique-id", "a3b4c5d6-0000-1111-2222-333344445555")],
        [("apns-id", requested.uppercased()), ("apns-unique-id", "A3B4C5D6-0000-1111-2222-333344445555")],
        [("apns-id", "2294465C-E2AA-4F25-9D3E-8BDB0E7D8A67")],
        [("apns-unique-id", "AbC"), ("apns-id", "X")],
        [("apns-unique-id", "ABCDEFGHIJKLMNOP")],
        [("apns-unique-id", "@[`{ZAza-0123456789")],
        [("apns-unique-id", "ÄBC-ÉTÉ-ǅ")],
        [("APNS-ID", requested.uppercased()), ("Apns-Unique-Id", "QRSTUVWXYZ")],
        [("apns-idx", requested), ("x-apns-id", "Y"), ("apns-unique-ids", "Z")],
        [],
    ]

    @Test(arguments: answers)
    func rawBytesReadAsTheHeaderArray(_ fields: [(String, String)]) {
        let reference = APNsResult(status: 200, headers: fields.map { (name: $0.0, value: $0.1) }, body: [])
        let block = HTTP2RawHeaderBlock(fields.map { HTTP2Header($0.0, $0.1) })
        for response in [
            HTTP2Response(status: 200, rawHeaders: block, body: [], streamID: 1),
            HTTP2Response(status: 200, headers: fields.map { HTTP2Header($0.0, $0.1) }),
        ] {
            let result = APNsResult(response: response)
            #expect(result.apnsID == reference.apnsID)
            #expect(result.apnsUniqueID == reference.apnsUniqueID)
            #expect(result.disposition == .delivered)
        }
    }
}
