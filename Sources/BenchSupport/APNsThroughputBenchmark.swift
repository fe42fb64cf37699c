package import APNs
package import APNsMock
internal import Crypto
internal import Foundation
import HTTP2
import Synchronization
import ToolSupport

/// Measures push throughput against an ``APNsMockServer``: with callpush's own ``APNsClient`` (closed loop: a fixed
/// number of pushes outstanding, each answer triggers the next), and with `h2load` posting the same request, so the
/// two can be compared as a ratio on the same machine in one run.
package enum APNsThroughputBenchmark {
    /// The device token every benchmark push goes to.
    package static let deviceToken = String(repeating: "ab", count: 32)
    /// The topic of benchmark pushes.
    package static let topic = "com.example.app"
    /// The payload of benchmark pushes (a realistic incoming-call alert).
    package static let payload = Array(
        #"{"pushType":1,"callId":"c-42","caller":{"name":"Alice","id":"u-7"},"aps":{"alert":{"title":"Alice","body":"Incoming call"},"mutable-content":1,"category":"INCOMING_CALL","interruption-level":"time-sensitive"}}"#
            .utf8)

    /// Starts a mock server in the open mode (`mock-apns --accept-any-token`: no JWT needed, so h2load can post to
    /// it as is, and the client's certificate credentials need no client CA).
    package static func makeServer(eventLoops: Int = 1) throws(APNsMockServerError) -> APNsMockServer {
        try APNsMockServer(configuration: APNsMockServerConfiguration(
            apns: APNsMockConfiguration(authentication: .acceptAnyToken, allowedBundleIDs: [topic]),
            recorderCapacity: 1, eventLoops: eventLoops))
    }

    /// Drives `server` with an ``APNsClient`` over `connections` connections, keeping `concurrency` pushes
    /// outstanding for `duration`.
    /// - Throws: ``APNsClientError`` when the client cannot be created.
    package static func measureClient(
        server: APNsMockServer,
        connections: Int,
        concurrency: Int,
        duration: Duration,
        eventLoops: Int = 1
    ) async throws -> APNsThroughputReport {
        try await measureClient(
            endpoint: server.endpoint,
            credentials: .certificate(certificatePath: server.certificatePath, privateKeyPath: server.privateKeyPath),
            connections: connections, concurrency: concurrency, duration: duration, eventLoops: eventLoops)
    }

    /// Drives any APNs endpoint (e.g. a `callpush mock-apns` process) with an ``APNsClient`` using `credentials`
    /// over `connections` connections, keeping `concurrency` pushes outstanding for `duration`.
    /// - Throws: ``APNsClientError`` when the client cannot be created.
    package static func measureClient(
        endpoint: APNsEndpoint,
        credentials: APNsCredentials,
        connections: Int,
        concurrency: Int,
        duration: Duration,
        eventLoops: Int = 1
    ) async throws -> APNsThroughputReport {
        let client = try APNsClient(configuration: APNsClientConfiguration(
            credentials: credentials, customEndpoint: endpoint, connectionsPerPool: connections,
            requestTimeout: .seconds(30), eventLoops: eventLoops))
        defer { client.shutdown() }
        let request = try APNsRequest(
            deviceToken: DeviceToken(deviceToken), pushType: .alert, topic: topic, payload: payload)
        // Warm up: open every connection.
        for _ in 0..<(connections * 4) { _ = await client.send(request) }
        while client.poolStatus(for: .production).openConnections < connections {
            try await Task.sleep(for: .milliseconds(10))
        }

        let loop = ClosedLoop(client: client, request: request)
        let start = ContinuousClock.now
        loop.start(concurrency: concurrency)
        try await Task.sleep(for: duration)
        let (pushes, failures) = loop.stop()
        let seconds = Double((ContinuousClock.now - start).components.attoseconds) / 1e18
            + Double((ContinuousClock.now - start).components.seconds)
        // Let the outstanding pushes drain before the client shuts down.
        let drainDeadline = ContinuousClock.now + .seconds(10)
        while loop.outstanding > 0, ContinuousClock.now < drainDeadline { try await Task.sleep(for: .milliseconds(5)) }
        return APNsThroughputReport(driver: "APNsClient", connections: connections, concurrency: concurrency,
                                    seconds: seconds, pushes: pushes, failures: failures)
    }

    /// Runs `h2load` against `server` with the same request, connection count and total concurrency.
    /// - Parameter h2loadPath: the h2load binary (nghttp2-client).
    /// - Throws: ``ProcessStartError`` when h2load cannot run (it is killed after the duration and a minute);
    ///   ``APNsMockServerError`` when its output has no result line.
    package static func measureH2Load(
        server: APNsMockServer,
        connections: Int,
        concurrency: Int,
        duration: Duration,
        h2loadPath: String = "/usr/bin/h2load"
    ) throws -> APNsThroughputReport {
        let payloadPath = NSTemporaryDirectory() + "callpush-bench-payload-" + UUID().uuidString + ".json"
        try Data(payload).write(to: URL(fileURLWithPath: payloadPath))
        defer { try? FileManager.default.removeItem(atPath: payloadPath) }
        let runSeconds = max(1, Int(duration.components.seconds))
        let text = try ChildProcess.run([
            "-c", String(connections), "-m", String(max(1, concurrency / max(1, connections))),
            "-D", String(runSeconds), "-t", "1",
            "-d", payloadPath,
            "-H", "apns-topic: \(topic)", "-H", "apns-push-type: alert", "-H", "apns-priority: 10",
            "-H", "content-type: application/json",
            "https://\(server.configuration.host):\(server.port)/3/device/\(deviceToken)",
        ], executable: h2loadPath, timeoutSeconds: Double(runSeconds + 60)).output
        // "finished in 5.00s, 41234.20 req/s, 3.54MB/s" and "requests: N total, N started, N done, N succeeded, …"
        // and "status codes: N 2xx, …".
        guard let finished = text.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }) else {
            throw APNsMockServerError(.measurement, "h2load gave no result: \(text.suffix(500))")
        }
        let words = finished.split(whereSeparator: { $0 == " " || $0 == "," })
        let seconds = Double(words[2].dropLast()) ?? 0
        var done = 0
        var succeeded = 0
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("requests:") }) {
            let parts = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            for part in parts {
                let fields = part.split(separator: " ")
                if part.hasSuffix("done"), let value = fields.first.flatMap({ Int($0) }) { done = value }
                if part.hasSuffix("succeeded"), let value = fields.first.flatMap({ Int($0) }) { succeeded = value }
            }
        }
        var twoHundreds = succeeded
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("status codes:") }),
            let value = line.split(separator: " ").dropFirst(2).first.flatMap({ Int($0) })
        {
            twoHundreds = value
        }
        return APNsThroughputReport(driver: "h2load", connections: connections, concurrency: concurrency,
                                    seconds: seconds, pushes: done, failures: done - twoHundreds)
    }

    /// Measures callpush's client and h2load over each connection count, against one fresh server per run.
    /// - Returns: pairs (client, h2load) in the order of `connectionCounts`.
    package static func compare(
        connectionCounts: [Int] = [1, 2, 4],
        concurrencyPerConnection: Int = 100,
        duration: Duration = .seconds(5)
    ) async throws -> [(client: APNsThroughputReport, h2load: APNsThroughputReport)] {
        var results: [(APNsThroughputReport, APNsThroughputReport)] = []
        for connections in connectionCounts {
            let concurrency = connections * concurrencyPerConnection
            let server = try makeServer()
            let client = try await measureClient(server: server, connections: connections, concurrency: concurrency,
                                                 duration: duration)
            server.stop()
            let server2 = try makeServer()
            let h2load = try measureH2Load(server: server2, connections: connections, concurrency: concurrency,
                                           duration: duration)
            server2.stop()
            results.append((client, h2load))
        }
        return results
    }
}

/// Keeps a fixed number of pushes outstanding: each answer sends the next until stopped.
final class ClosedLoop: Sendable {
    let client: APNsClient
    let request: APNsRequest
    private let running = Atomic<Bool>(false)
    private let completed = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let inFlight = Atomic<Int>(0)

    init(client: APNsClient, request: APNsRequest) {
        self.client = client
        self.request = request
    }

    var outstanding: Int { inFlight.load(ordering: .relaxed) }

    func start(concurrency: Int) {
        running.store(true, ordering: .relaxed)
        for _ in 0..<concurrency { next() }
    }

    /// Stops issuing; returns answers and failures counted while running.
    func stop() -> (Int, Int) {
        running.store(false, ordering: .relaxed)
        return (completed.load(ordering: .relaxed), failed.load(ordering: .relaxed))
    }

    private func next() {
        inFlight.add(1, ordering: .relaxed)
        client.send(request) { [self] result in
            inFlight.subtract(1, ordering: .relaxed)
            guard running.load(ordering: .relaxed) else { return }
            completed.add(1, ordering: .relaxed)
            if result.status != 200 { failed.add(1, ordering: .relaxed) }
            next()
        }
    }
}
