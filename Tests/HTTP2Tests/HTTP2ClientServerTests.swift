import Foundation
import Synchronization
import TestSupport
@testable import Runtime
@testable import TLS
@testable import HTTP2
@testable import HTTP2Server
import Testing

@Suite("HTTP2 client ↔ server over TLS on 127.0.0.1", .serialized)
struct HTTP2ClientServerTests {
    let certificates = TestCertificates.shared

    @Test func singleRequestRoundTrip() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: echoHandler)
        defer { server.stop() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        #expect(connection.state == .ready)
        #expect(connection.maxConcurrentStreams == 1000)
        let response = try await connection.send(testRequest(server.port, id: 7), deadline: .after(.seconds(5)))
        #expect(response.status == 200)
        #expect(response.headers.first(name: "apns-id") == "id-7")
        #expect(response.body == Array("{\"aps\":{}}".utf8))
        connection.close()
        #expect(await Eventually.waitUntil(timeout: .seconds(2)) { connection.state == .closed })
    }

    /// A stream is the caller's object, and a completed one may go out again (the APNs pool re-sends a push as the same
    /// object): sent a second time, on another connection of another loop, from inside its first completion, it carries
    /// that second answer alone — no header field or body byte of the first is left in it.
    @Test func aCompletedStreamSentAgainCarriesOnlyItsNewAnswer() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: echoHandler)
        defer { server.stop() }
        let first = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.loops[0])
        let second = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.loops[1])
        var again = testRequest(server.port, id: 2)
        again.body = Array("{\"aps\":{\"alert\":\"again\"}}".utf8)
        let stream = ResendingStream(testRequest(server.port, id: 1), deadline: .after(.seconds(5)), then: again, on: second)
        first.submit(stream)
        let results = try #require(stream.collector.wait(seconds: 10))
        let responses = try results.map { try $0.get() }
        #expect(responses.map { $0.headers.filter { $0.name == "apns-id" }.map(\.value) } == [["id-1"], ["id-2"]])
        #expect(responses.map(\.body) == [Array("{\"aps\":{}}".utf8), again.body])
        first.close()
        second.close()
    }

    /// A closed connection is released: its ping timer once kept it (and its nghttp2 session memory and TLS context)
    /// alive for good, so every connection replaced after a GOAWAY stayed in memory.
    @Test func aClosedConnectionIsReleased() async throws {
        let released: WeakReference<HTTP2ClientConnection>
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: echoHandler)
        defer { server.stop() }
        do {
            let connection = try await HTTP2ClientConnection.connect(
                host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
            released = WeakReference(connection)
            let response = try await connection.send(testRequest(server.port, id: 1), deadline: .after(.seconds(5)))
            #expect(response.status == 200)
            connection.close()
            #expect(await Eventually.waitUntil(timeout: .seconds(5)) { connection.state == .closed })
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { released.object == nil })
    }

    @Test func manyConcurrentRequestsOnOneAndSeveralConnections() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: echoHandler)
        defer { server.stop() }
        let tls = try certificates.clientContext()
        var connections: [HTTP2ClientConnection] = []
        for _ in 0..<3 {
            connections.append(try await HTTP2ClientConnection.connect(
                host: "localhost", port: server.port, tls: tls, on: group.next()))
        }
        let perConnection = 2000
        let collector = ResultCollector(expected: perConnection * connections.count)
        for connection in connections {
            for i in 0..<perConnection {
                connection.submit(testRequest(server.port, id: i), deadline: .after(.seconds(20))) { collector.add($0) }
            }
        }
        let results = try #require(collector.wait(seconds: 30))
        let ok = results.filter { (try? $0.get().status) == 200 }.count
        #expect(ok == perConnection * connections.count)
        for connection in connections {
            // The published counters are refreshed on the loop after the last completion ran.
            #expect(await Eventually.waitUntil(timeout: .seconds(2)) {
                connection.activeStreams == 0 && connection.queuedRequests == 0
            })
            connection.close()
        }
    }

    @Test func serverLowersMaxConcurrentStreamsMidFlight() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let held = HeldResponders()
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group) { request, responder in
            held.add(request.streamID, responder)
        }
        defer { server.stop() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        let total = 50
        let collector = ResultCollector(expected: total)
        for i in 0..<20 {
            connection.submit(testRequest(server.port, id: i), deadline: .after(.seconds(20))) { collector.add($0) }
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { held.count == 20 })
        server.setMaxConcurrentStreams(1)
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { connection.maxConcurrentStreams == 1 })
        for i in 20..<total {
            connection.submit(testRequest(server.port, id: i), deadline: .after(.seconds(20))) { collector.add($0) }
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { connection.queuedRequests == 30 })
        // Answer everything the server holds, repeatedly, until all requests completed.
        let drained = await Eventually.waitUntil(timeout: .seconds(20)) {
            for (_, responder) in held.takeAll() { responder.respond(status: 200) }
            #expect(connection.activeStreams <= 20)
            return collector.count == total
        }
        #expect(drained)
        let results = try #require(collector.wait(seconds: 1))
        #expect(results.allSatisfy { (try? $0.get().status) == 200 })
        connection.close()
    }

    @Test func goAwayWhileRequestsInFlight() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let held = HeldResponders()
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group) { request, responder in
            held.add(request.streamID, responder)
        }
        defer { server.stop() }
        let states = StateLog()
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next(),
            stateHandler: { _, state in states.append(state) })
        let collector = ResultCollector(expected: 10)
        for i in 0..<10 {
            connection.submit(testRequest(server.port, id: i), deadline: .after(.seconds(60))) { collector.add($0) }
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { held.count == 10 })
        server.sendGoAway(lastStreamID: 9, debugData: "shutting down")  // streams 1,3,5,7,9 stay
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { connection.state == .goingAway })
        #expect(connection.goAwayLastStreamID == 9)
        // New requests are refused with a retriable error.
        let refused = try await withTimeout(5) {
            await withCheckedContinuation { continuation in
                connection.submit(testRequest(server.port, id: 99)) { continuation.resume(returning: $0) }
            }
        }
        guard case .failure(let refusal) = refused else { Issue.record("expected failure"); return }
        #expect(refusal.isRetriable)
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { collector.count == 5 })  // the 5 streams above 9 failed
        for (_, responder) in held.takeAll() { responder.respond(status: 200) }
        let results = try #require(collector.wait(seconds: 10))
        let successes = results.compactMap { try? $0.get() }
        let failures = results.compactMap { result -> HTTP2Error? in if case .failure(let e) = result { return e }; return nil }
        #expect(successes.count == 5)
        #expect(successes.allSatisfy { $0.streamID <= 9 })
        #expect(failures.count == 5)
        #expect(failures.allSatisfy { $0.isRetriable && $0.code == .notProcessed })
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { connection.state == .closed })
        #expect(states.values.contains(.goingAway))
    }

    /// A connection that opens the stream at its retirement id opens no more: the requests queued behind it come
    /// back `notProcessed` (safe to send elsewhere), those on the wire finish, and it closes on its own with GOAWAY —
    /// instead of nghttp2 refusing every new stream once the 2³⁰ ids are gone.
    @Test func aConnectionRetiresBeforeItsStreamIDsRunOut() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let held = HeldResponders()
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group) { request, responder in
            held.add(request.streamID, responder)
        }
        defer { server.stop() }
        var configuration = HTTP2ClientConfiguration()
        configuration.firstStreamID = configuration.retirementStreamID - 10  // 6 streams up to the retirement id
        let states = StateLog()
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), configuration: configuration,
            on: group.next(), stateHandler: { _, state in states.append(state) })
        let collector = ResultCollector(expected: 10)
        for i in 0..<10 {
            connection.submit(testRequest(server.port, id: i), deadline: .after(.seconds(60))) { collector.add($0) }
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { held.count == 6 && collector.count == 4 })
        #expect(connection.state == .goingAway)
        for (_, responder) in held.takeAll() { responder.respond(status: 200) }
        let results = try #require(collector.wait(seconds: 10))
        let successes = results.compactMap { try? $0.get() }
        let refused = results.compactMap { result -> HTTP2Error? in if case .failure(let e) = result { return e }; return nil }
        #expect(successes.count == 6)
        #expect(successes.map(\.streamID).max() == configuration.retirementStreamID)
        #expect(refused.count == 4 && refused.allSatisfy { $0.code == .notProcessed && $0.isRetriable })
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { connection.state == .closed }, "it closes once its last stream finished")
        #expect(states.values.suffix(2) == [.goingAway, .closed])
    }

    @Test func refusedStreamIsRetriable() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group) { _, responder in
            responder.reset(errorCode: HTTP2Error.refusedStreamErrorCode)
        }
        defer { server.stop() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        await #expect { try await connection.send(testRequest(server.port), deadline: .after(.seconds(5))) } throws: { error in
            guard let error = error as? HTTP2Error else { return false }
            return error.code == .streamReset && error.isRetriable
        }
        connection.close()
    }

    /// A server on `group` that holds every request unanswered (limited to `maxConcurrentStreams` when given), and a
    /// client connection to it that has seen that limit.
    private func silentServer(on group: EventLoopGroup, maxConcurrentStreams: Int? = nil) async throws
        -> (server: HTTP2Server, held: HeldResponders, connection: HTTP2ClientConnection)
    {
        let held = HeldResponders()
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group) { request, responder in
            held.add(request.streamID, responder)
        }
        if let maxConcurrentStreams { server.setMaxConcurrentStreams(maxConcurrentStreams) }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        if let maxConcurrentStreams { #expect(await Eventually.waitUntil(timeout: .seconds(5)) { connection.maxConcurrentStreams == maxConcurrentStreams }) }
        return (server, held, connection)
    }

    @Test func deadlineFiresWhenServerStalls() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let (server, _, connection) = try await silentServer(on: group)
        defer { server.stop() }
        let start = Date()
        await #expect { try await connection.send(testRequest(server.port), deadline: .after(.milliseconds(200))) } throws: { error in
            (error as? HTTP2Error)?.code == .timeout
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 0.19, "the deadline never fires early")
        #expect(await Eventually.waitUntil(timeout: .seconds(2)) { connection.activeStreams == 0 })
        // The connection is still usable.
        #expect(connection.state == .ready)
        connection.close()
    }

    /// Each deadline fires at its own time, whatever the order the requests came in: a later request with an earlier
    /// deadline, requests still queued behind the one stream the server allows, and a deadline after a sweep that
    /// already failed others (the connection sweeps only once the earliest deadline is due).
    @Test func deadlinesFireInTheirOwnTimeOnTheWireAndQueued() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let (server, _, connection) = try await silentServer(on: group, maxConcurrentStreams: 1)
        defer { server.stop() }
        let start = Date()
        let failures = Mutex<[(id: Int, seconds: Double, reason: String)]>([])
        // On the wire with 1.2 s; then queued with 0.3 s and 0.7 s.
        for (id, milliseconds) in [(1, 1200), (2, 300), (3, 700)] {
            connection.submit(testRequest(server.port, id: id), deadline: .after(.milliseconds(milliseconds))) { result in
                guard case .failure(let error) = result, error.code == .timeout else { return }
                failures.withLock { $0.append((id, Date().timeIntervalSince(start), error.reason)) }
            }
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { failures.withLock { $0.count } == 3 })
        let seen = failures.withLock { $0 }
        #expect(seen.map(\.id) == [2, 3, 1], "\(seen)")
        for (failure, due) in zip(seen, [0.3, 0.7, 1.2]) {
            #expect(failure.seconds >= due - 0.01 && failure.seconds < due + 0.5, "\(failure) due at \(due) s")
        }
        #expect(seen.prefix(2).allSatisfy { $0.reason.contains("queued") }, "\(seen)")
        #expect(connection.state == .ready)
        connection.close()
    }

    @Test func abruptCloseAnswersEveryPendingRequest() async throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        let (server, held, connection) = try await silentServer(on: group, maxConcurrentStreams: 10)
        defer { server.stop() }
        let collector = ResultCollector(expected: 30)
        for i in 0..<30 { connection.submit(testRequest(server.port, id: i)) { collector.add($0) } }
        #expect(await Eventually.waitUntil(timeout: .seconds(5)) { held.count == 10 && connection.queuedRequests == 20 })
        server.dropAllConnections()
        let results = try #require(collector.wait(seconds: 5))
        let errors = results.compactMap { result -> HTTP2Error? in if case .failure(let e) = result { return e }; return nil }
        #expect(errors.count == 30)
        #expect(errors.filter { $0.code == .connectionClosed }.count == 10)
        #expect(errors.filter { $0.code == .notProcessed && $0.isRetriable }.count == 20)
        #expect(connection.state == .closed)
        // A request submitted after the close was never sent: safe to retry, not "connection lost".
        let late = ResultCollector(expected: 1)
        connection.submit(testRequest(server.port, id: 99)) { late.add($0) }
        let lateResult = try #require(late.wait(seconds: 5)?.first)
        guard case .failure(let lateError) = lateResult else { Issue.record("a closed connection answered"); return }
        #expect(lateError.code == .notProcessed && lateError.isRetriable)
    }

    /// A backlog is answered while it is read: a loop turn hands at most `TLSTransport.readBudget` bytes to the
    /// session before the answers they produced are written. One loop thread runs both ends, so the order is fixed:
    /// the client's 800 requests (~340 KB) are all written in one turn; had the server read them all before
    /// writing (as it did), the first answer would have come after the 800th request was handled; now it comes after
    /// about 200.
    @Test func answersFlowWhileABacklogIsRead() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let handled = Tally()
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group) { request, responder in
            handled.add()
            echoHandler(request, responder)
        }
        defer { server.stop() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        let total = 800
        let collector = ResultCollector(expected: total)
        let handledAtFirstAnswer = Tally()
        let body = Array("{\"aps\":{\"alert\":\"\(String(repeating: "x", count: 480))\"}}".utf8)
        connection.submit(batch: (0..<total).map { id in
            var request = testRequest(server.port, id: id)
            request.body = body
            return HTTP2ClosureStream(request, deadline: .after(.seconds(20))) { result in
                if collector.count == 0 { handledAtFirstAnswer.add(handled.value) }  // once: the first answer
                collector.add(result)
            }
        })
        let results = try #require(collector.wait(seconds: 30))
        #expect(results.filter { (try? $0.get().status) == 200 }.count == total)
        // The budget (64 KiB) and the record that crosses it hold about 200 of these requests.
        #expect(handledAtFirstAnswer.value > 0)
        #expect(handledAtFirstAnswer.value < total / 2, "the server handled \(handledAtFirstAnswer.value) of \(total) requests before answering any")
        connection.close()
    }

    /// Output larger than a socket takes at once arrives whole: four 300 KB bodies each way through one loop thread
    /// (the server echoes them), so each side's write fills its socket and resumes once the peer has read, while the
    /// reader takes its input a budget at a time.
    @Test func largeBodiesBothWaysArriveWhole() async throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdown() }
        let server = try HTTP2Server(tls: try certificates.serverContext(), group: group, handler: echoHandler)
        defer { server.stop() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        let bodies = (0..<4).map { index in (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) } }
        let collector = ResultCollector(expected: bodies.count)
        for (index, body) in bodies.enumerated() {
            var request = testRequest(server.port, id: index)
            request.body = body
            connection.submit(request, deadline: .after(.seconds(20))) { collector.add($0) }
        }
        let results = try #require(collector.wait(seconds: 30))
        let echoed = results.compactMap { try? $0.get() }
        #expect(echoed.count == bodies.count)
        for response in echoed {
            let id = try #require(response.headers.first(name: "apns-id").flatMap { Int($0.dropFirst(3)) })
            #expect(response.status == 200 && response.body == bodies[id], "response \(id): \(response.body.count) bytes")
        }
        connection.close()
    }

    @Test func serverLingersAfterGoAwaySoTheClientReadsItWhileStillSending() async throws {
        // The server answers 50 streams, then sends GOAWAY and finishes while the client keeps submitting. The client
        // must see the GOAWAY (not a reset): everything is either answered or retriable.
        let group = try EventLoopGroup(numberOfThreads: 2)
        defer { group.shutdown() }
        var configuration = HTTP2ServerConfiguration()
        configuration.goAwayAfterStreams = 50
        let server = try HTTP2Server(configuration: configuration, tls: try certificates.serverContext(), group: group) { _, responder in
            responder.respond(status: 200, headers: [], body: [])
        }
        defer { server.stop() }
        let connection = try await HTTP2ClientConnection.connect(
            host: "127.0.0.1", port: server.port, tls: try certificates.clientContext(), on: group.next())
        let collector = ResultCollector(expected: 2000)
        for i in 0..<2000 { connection.submit(testRequest(server.port, id: i)) { collector.add($0) } }
        let results = try #require(collector.wait(seconds: 30))
        let lost = results.filter { result in
            if case .failure(let error) = result { return !error.isRetriable }
            return false
        }
        #expect(lost.count == 0, "requests failed without being safe to retry, e.g. \(lost.prefix(2))")
        #expect(results.filter { (try? $0.get().status) == 200 }.count == 50)
    }
}

final class StateLog: Sendable {
    private let items = Mutex<[HTTP2ConnectionState]>([])
    func append(_ state: HTTP2ConnectionState) { items.withLock { $0.append(state) } }
    var values: [HTTP2ConnectionState] { items.withLock { $0 } }
}

/// Sends `then` on `connection` from inside its first completion (the same object, as a re-send), and collects both
/// results.
private final class ResendingStream: HTTP2ClientStream, @unchecked Sendable {
    let collector = ResultCollector(expected: 2)
    private let next: HTTP2Request
    private let connection: HTTP2ClientConnection

    init(_ request: HTTP2Request, deadline: HTTP2Deadline, then next: HTTP2Request, on connection: HTTP2ClientConnection) {
        self.next = next
        self.connection = connection
        super.init(request, deadline: deadline)
    }

    override func completed(_ result: Result<HTTP2Response, HTTP2Error>) {
        collector.add(result)
        guard collector.count == 1 else { return }
        http2Request = next
        connection.submit(self)
    }
}
