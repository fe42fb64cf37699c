import Foundation
@testable import Runtime
@testable import HTTP2
@testable import HTTP2Server
import Testing

/// The client's request-header cache and raw response-header storage: every request must go out with exactly its own
/// fields, and every response must come back with all its fields, in order.
@Suite("HTTP2 client header encoding and response headers", .serialized)
struct HTTP2ClientEncodingTests {
    let certificates = TestCertificates.shared

    /// Echoes the request's path, method, authority and header fields as response headers (`x-path`, …, `x-h-<name>`).
    private static func mirror(_ request: HTTP2ServerRequest, _ responder: HTTP2ServerResponder) {
        var headers = [HTTP2Header("x-path", request.path), HTTP2Header("x-method", request.method),
                       HTTP2Header("x-authority", request.authority)]
        for header in request.headers { headers.append(HTTP2Header("x-h-" + header.name, header.value)) }
        responder.respond(status: 200, headers: headers, body: [])
    }

    @Test func varyingRequestsOnOneConnectionEachSendTheirOwnFields() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: Self.mirror)
        defer { server.stop() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        defer { connection.close() }
        let shared = [HTTP2Header("apns-topic", "com.example"), HTTP2Header("apns-push-type", "alert")]
        let long = String(repeating: "v", count: 3000)  // beyond the scratch and header-block first capacities
        var requests: [HTTP2Request] = []
        for i in 0..<40 {
            switch i % 5 {
            case 0: requests.append(HTTP2Request(path: "/3/device/\(i)", authority: "a", headers: shared))
            case 1: requests.append(HTTP2Request(path: "/3/device/\(i)", authority: "a", headers: shared))
            case 2: requests.append(HTTP2Request(method: "GET", path: "/3/device/\(i)", authority: "b", headers: shared))
            case 3: requests.append(HTTP2Request(path: "/p/" + long + "\(i)", authority: "a",
                                                 headers: shared + [HTTP2Header("x-long", long)]))
            default: requests.append(HTTP2Request(path: "/3/device/\(i)", authority: "a", headers: []))
            }
        }
        requests.append(requests[0])  // the same request twice in a row
        requests.append(requests[0])
        for request in requests {
            let response = try await connection.send(request, deadline: .after(.seconds(5)))
            #expect(response.status == 200)
            var expected = [HTTP2Header("x-path", request.path), HTTP2Header("x-method", request.method),
                             HTTP2Header("x-authority", request.authority)]
            for header in request.headers { expected.append(HTTP2Header("x-h-" + header.name, header.value)) }
            let received = response.headers.filter { $0.name.hasPrefix("x-") }
            #expect(received == expected)
            #expect(response.header("x-path") == request.path)
            #expect(response.header("x-h-apns-topic") == request.headers.first(name: "apns-topic"))
            #expect(response.header("no-such-header") == nil)
        }
    }

    /// `"\u{E9}" == "e\u{301}"` in Swift, but they are different bytes: the second request must not reuse the first
    /// one's encoding.
    @Test func canonicallyEquivalentValuesAreSentAsTheirOwnBytes() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: Self.mirror)
        defer { server.stop() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        defer { connection.close() }
        for value in ["caf\u{E9}", "cafe\u{301}", "caf\u{E9}"] {
            let request = HTTP2Request(path: "/p", authority: "a", headers: [HTTP2Header("x-v", value)])
            let response = try await connection.send(request, deadline: .after(.seconds(5)))
            #expect(response.header("x-h-x-v").map { Array($0.utf8) } == Array(value.utf8))
        }
    }

    @Test func responseHeadersCanBeReplacedAndConstructed() {
        var response = HTTP2Response(status: 200, headers: [HTTP2Header("a", "1"), HTTP2Header("a", "2")])
        #expect(response.header("a") == "1")
        response.headers.append(HTTP2Header("b", "3"))
        #expect(response.headers.map(\.value) == ["1", "2", "3"])
        #expect(response.header("b") == "3")
    }

    /// The fields the encoder hands nghttp2, as (name, value, flags).
    private static func encoded(_ request: HTTP2Request, by encoder: NGHTTP2RequestEncoder) -> [(String, String, UInt8)] {
        encoder.withFields(of: request) { fields, count in
            UnsafeBufferPointer(start: fields, count: count).map { field in
                (String(decoding: UnsafeBufferPointer(start: field.name, count: field.namelen), as: UTF8.self),
                 String(decoding: UnsafeBufferPointer(start: field.value, count: field.valuelen), as: UTF8.self),
                 field.flags)
            }
        }
    }

    /// Requests that share leading header fields reuse their encoding up to the first that differs: each must still
    /// come out field for field as a fresh encoder encodes it (fields changed, added, removed, grown past the scratch).
    @Test func requestsDifferingFromAHeaderOnAreEncodedAsAFreshEncoderWould() {
        let encoder = NGHTTP2RequestEncoder()
        let base = [HTTP2Header("authorization", "bearer x.y.z"), HTTP2Header("apns-push-type", "alert"),
                    HTTP2Header("apns-expiration", "1764489630"), HTTP2Header("apns-collapse-id", "c-1", neverIndex: true),
                    HTTP2Header("content-length", "91")]
        var variants: [[HTTP2Header]] = [base]
        for index in base.indices {
            var changed = base
            changed[index].value += "-\(index)"
            variants.append(changed)
            var flipped = base
            flipped[index].neverIndex.toggle()
            variants.append(flipped)
        }
        variants += [Array(base.prefix(3)), base + [HTTP2Header("apns-id", "8d7f0a52-3c1e-4b6a-9f00-123456789abc")], [],
                     base + [HTTP2Header("x-long", String(repeating: "v", count: 5000))], base]
        for (number, headers) in (variants + variants.reversed()).enumerated() {
            let request = HTTP2Request(path: "/3/device/\(number)", authority: "a", headers: headers)
            let reused = Self.encoded(request, by: encoder)
            let fresh = Self.encoded(request, by: NGHTTP2RequestEncoder())
            #expect(reused.count == fresh.count, "request \(number)")
            for (got, want) in zip(reused, fresh) {
                #expect(got.0 == want.0 && got.1 == want.1 && got.2 == want.2, "request \(number): \(got) vs \(want)")
            }
        }
    }
}
