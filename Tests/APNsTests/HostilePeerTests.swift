@testable import APNs
import Foundation
@testable import Telemetry
import Testing

/// An APNs peer that breaks HTTP/2's rules or floods the client cannot wedge it: the push in flight on the hostile
/// connection ends with a retriable answer the client found itself (or at its request timeout where only the clock
/// can tell), the connection is dropped, and the next push rings through a fresh connection. A PING flood followed by
/// ordinary answers may also just be answered: the push is then delivered. The peer writes its frames by hand
/// (`scripts/hostile-h2-peer.py`), over real TLS on 127.0.0.1.
@Suite(.timeLimit(.minutes(2))) struct HostilePeerTests {
    static let requestTimeout = Duration.seconds(4)

    struct Case: Sendable, CustomStringConvertible {
        let mode: String
        /// The first push ends because the client detects the fault itself, not at its request timeout.
        let endsEarly: Bool
        /// The peer answers after its fault, so a client that keeps up with it delivers the first push.
        var mayDeliver = false
        var description: String { mode }
    }

    static let cases: [Case] = [
        Case(mode: "huge-header-value", endsEarly: true), Case(mode: "many-headers", endsEarly: true),
        Case(mode: "endless-continuation", endsEarly: true), Case(mode: "huge-body", endsEarly: true),
        Case(mode: "rst-storm", endsEarly: true), Case(mode: "zero-streams", endsEarly: false),
        Case(mode: "ping-flood", endsEarly: true, mayDeliver: true), Case(mode: "silent", endsEarly: false),
        Case(mode: "garbage", endsEarly: true),
    ]

    @Test(arguments: cases) func aHostilePeerCostsOnePushARetryAndNothingMore(_ hostile: Case) async throws {
        let peer = try HostilePeer(mode: hostile.mode)
        defer { peer.stop() }
        let configuration = APNsClientConfiguration(
            credentials: .certificate(certificatePath: peer.certificate, privateKeyPath: peer.key),
            customEndpoint: .custom(host: peer.host, port: peer.port, caFile: peer.certificate),
            connectionsPerPool: 1, requestTimeout: Self.requestTimeout, connectTimeout: .seconds(3),
            reconnectBackoffInitial: .milliseconds(50), reconnectBackoffMaximum: .milliseconds(200))
        let client = try APNsClient(configuration: configuration, metrics: MetricsRegistry())
        defer { client.shutdown() }

        let started = ContinuousClock.now
        let first = await client.send(try APNsClientFixture.alert())
        let firstTook = ContinuousClock.now - started
        if !(hostile.mayDeliver && first.status == 200) {
            #expect(first.status != 200, "\(hostile): \(first)")
            #expect(first.disposition == .retryLater, "\(hostile): \(first)")
        }
        // The reason tells who ended the push: the request timeout says "Timeout", a fault the client detected its own
        // reason. Time alone cannot tell on a loaded machine (connecting can take seconds there).
        if hostile.endsEarly {
            #expect(first.reason != APNsReason.timeout.rawValue, "\(hostile): the first push waited for its request timeout: \(first)")
        }
        #expect(firstTook < Self.requestTimeout + .seconds(10), "\(hostile): the first push took \(firstTook)")

        // The hostile connection is gone: a push rings through the next one.
        var next = first
        let deadline = ContinuousClock.now + .seconds(20)
        while next.status != 200, ContinuousClock.now < deadline {
            next = await client.send(try APNsClientFixture.alert())
        }
        #expect(next.status == 200, "\(hostile): after the hostile connection: \(next)")
        print("HostilePeerTests \(hostile): first push \(first.reason ?? "-") after \(firstTook)")
    }
}
