@preconcurrency import Glibc
internal import Runtime
package import TLS
package import HTTP2
import Telemetry
import Synchronization

/// Drives N connections × M concurrent streams against an HTTP/2 server and measures requests per second and CPU.
/// The engine behind `callpush bench` (HTTP/2 part); comparable to `h2load -c N -m M`.
package struct HTTP2LoadGenerator: Sendable {
    /// What to run.
    package struct Configuration: Sendable {
        /// Default: `"127.0.0.1"`.
        package var host: String
        package var port: Int
        /// TLS settings for every connection.
        /// Default: system trust store.
        package var tls: TLSClientConfiguration
        /// Number of connections (h2load `-c`).
        /// Default: `1`.
        package var connections: Int
        /// Concurrent streams per connection (h2load `-m`).
        /// Default: `100`.
        package var streamsPerConnection: Int
        /// Total requests over all connections (h2load `-n`); `nil` runs for `duration`.
        /// Default: `nil`.
        package var totalRequests: Int?
        /// How long to run when `totalRequests` is `nil`.
        /// Default: 10 s.
        package var duration: Duration
        /// Event loop threads to spread connections over.
        /// Default: `1`.
        package var threads: Int
        /// The request sent repeatedly. Default: a small JSON POST to `/3/device/<64 hex>`.
        package var request: HTTP2Request
        /// When not empty, sent instead of ``request``, in turn (each connection from the first): requests that
        /// differ from one another as a worker's pushes do (path, ids, payload), so HPACK and the request encoder
        /// do the work they do in the worker. Default: `[]`.
        package var variants: [HTTP2Request] = []

        package init(
            host: String = "127.0.0.1",
            port: Int,
            tls: TLSClientConfiguration = TLSClientConfiguration(),
            connections: Int = 1,
            streamsPerConnection: Int = 100,
            totalRequests: Int? = nil,
            duration: Duration = .seconds(10),
            threads: Int = 1,
            request: HTTP2Request? = nil
        ) {
            self.host = host
            self.port = port
            self.tls = tls
            self.connections = connections
            self.streamsPerConnection = streamsPerConnection
            self.totalRequests = totalRequests
            self.duration = duration
            self.threads = threads
            self.request = request ?? HTTP2Request(
                path: "/3/device/" + String(repeating: "ab", count: 32),
                authority: host,
                headers: [HTTP2Header("apns-topic", "com.example.app"), HTTP2Header("apns-push-type", "alert"),
                          HTTP2Header("content-type", "application/json")],
                body: Array(#"{"aps":{"alert":{"title":"Incoming call","body":"Alice"},"sound":"default"}}"#.utf8))
        }
    }

    /// What happened.
    package struct Report: Sendable, CustomStringConvertible {
        package var succeeded: Int
        package var failed: Int
        /// Responses by status.
        package var statuses: [Int: Int]
        package var elapsedSeconds: Double
        /// Process CPU time (user + system) during the run.
        package var cpuSeconds: Double
        package var requestsPerSecond: Double { elapsedSeconds > 0 ? Double(succeeded + failed) / elapsedSeconds : 0 }
        /// CPU seconds per 100 000 requests.
        package var cpuSecondsPer100k: Double {
            succeeded + failed > 0 ? cpuSeconds * 100_000 / Double(succeeded + failed) : 0
        }
        package var description: String {
            let rps = Int(requestsPerSecond)
            return "requests=\(succeeded + failed) ok=\(succeeded) failed=\(failed) elapsed=\(elapsedSeconds)s "
                + "req/s=\(rps) cpu=\(cpuSeconds)s cpu/100k=\(cpuSecondsPer100k)s"
        }
    }

    package let configuration: Configuration

    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Connects, runs, closes, and reports. Uses its own event loop group.
    package func run() async throws(HTTP2Error) -> Report {
        let group: EventLoopGroup
        do throws(SocketError) { group = try EventLoopGroup(numberOfThreads: configuration.threads) } catch { throw HTTP2Error(error) }
        defer { group.shutdown() }
        let tls: TLSContext
        do throws(TLSError) { tls = try TLSContext(client: configuration.tls) } catch { throw HTTP2Error(error) }
        var clientConfiguration = HTTP2ClientConfiguration()
        clientConfiguration.maxConcurrentStreams = configuration.streamsPerConnection
        var connections: [HTTP2ClientConnection] = []
        for _ in 0..<max(1, configuration.connections) {
            connections.append(try await HTTP2ClientConnection.connect(
                host: configuration.host, port: configuration.port, tls: tls, configuration: clientConfiguration,
                on: group.next()))
        }
        let tally = LoadTally()
        let perConnection = configuration.totalRequests.map { max(1, $0 / connections.count) }
        let cpuStart = processCPUSeconds()
        let start = HTTP2Deadline.now()
        let stopAt = perConnection == nil ? start + configuration.duration : .distantFuture
        await withTaskGroup(of: Void.self) { tasks in
            for connection in connections {
                tasks.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let driver = LoadDriver(connection: connection, request: configuration.request,
                                                variants: configuration.variants,
                                                concurrency: configuration.streamsPerConnection,
                                                limit: perConnection, stopAt: stopAt, tally: tally) {
                            continuation.resume()
                        }
                        connection.loop.execute { driver.start() }
                    }
                }
            }
        }
        let elapsed = Double(HTTP2Deadline.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let cpu = processCPUSeconds() - cpuStart
        for connection in connections { connection.close() }
        let (succeeded, failed, statuses) = tally.snapshot()
        return Report(succeeded: succeeded, failed: failed, statuses: statuses, elapsedSeconds: elapsed, cpuSeconds: cpu)
    }
}

/// User + system CPU seconds of this process.
package func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Totals across connections (merged once per connection at the end).
final class LoadTally: Sendable {
    private let state = Mutex<(Int, Int, [Int: Int])>((0, 0, [:]))
    func merge(succeeded: Int, failed: Int, statuses: [Int: Int]) {
        state.withLock { value in
            value.0 += succeeded
            value.1 += failed
            value.2.merge(statuses, uniquingKeysWith: +)
        }
    }
    func snapshot() -> (Int, Int, [Int: Int]) { state.withLock { $0 } }
}

/// Keeps `concurrency` requests in flight on one connection, resubmitting from the completion (loop thread, no
/// hop). Its counters change only on the loop thread; they sit behind a mutex so that the driver is `Sendable` (an
/// uncontended lock per response, next to the HTTP/2 client's microseconds per request).
final class LoadDriver: Sendable {
    let connection: HTTP2ClientConnection
    let request: HTTP2Request
    /// Sent in turn instead of `request` when not empty. Each behind a reference: copying a request out of an array
    /// (a retain per string and array in it) would add to the client CPU per request the bench compares.
    let variants: [Variant]
    let concurrency: Int
    let limit: Int?
    let stopAt: HTTP2Deadline
    let tally: LoadTally
    let done: @Sendable () -> Void
    private let state = Mutex<State>(State())

    final class Variant: Sendable {
        let request: HTTP2Request
        init(_ request: HTTP2Request) { self.request = request }
    }

    private struct State {
        var sent = 0
        /// The index in `variants` of the next one to send.
        var next = 0
        var inFlight = 0
        var succeeded = 0
        var failed = 0
        /// Responses by status for 0..<1000 (no hashing per response); folded into a dictionary at the end.
        var statusCounts = [Int](repeating: 0, count: 1000)
        var otherStatuses: [Int: Int] = [:]
        var stopped = false
        var finished = false
        /// One completion shared by every request (no closure allocated per request). It keeps the driver alive
        /// while requests are in flight; set in `start`, cleared when finished (breaking the cycle).
        var onResult: HTTP2ClientConnection.Completion?

        mutating func count(_ result: Result<HTTP2Response, HTTP2Error>, stopOnFailure: Bool) {
            inFlight -= 1
            switch result {
            case .success(let response):
                succeeded += 1
                if response.status >= 0 && response.status < statusCounts.count {
                    statusCounts[response.status] += 1
                } else {
                    otherStatuses[response.status, default: 0] += 1
                }
            case .failure:
                failed += 1
                if stopOnFailure { stopped = true }
            }
        }

        /// Counts a request as sent and returns which of `count` variants to send (0 when there are none) and the
        /// completion to send it with; nil when the driver stops.
        mutating func nextSend(limit: Int?, of count: Int) -> (index: Int, completion: HTTP2ClientConnection.Completion)? {
            if stopped { return nil }
            if let limit, sent >= limit {
                stopped = true
                return nil
            }
            guard let onResult else { return nil }
            sent += 1
            inFlight += 1
            let index = next
            next = index + 1 >= count ? 0 : index + 1
            return (index, onResult)
        }

        /// The totals when the driver has just finished (stopped, nothing in flight); nil otherwise.
        mutating func finishIfIdle() -> (succeeded: Int, failed: Int, statuses: [Int: Int])? {
            guard stopped, inFlight == 0, !finished else { return nil }
            finished = true
            onResult = nil
            var statuses = otherStatuses
            for (status, count) in statusCounts.enumerated() where count > 0 { statuses[status, default: 0] += count }
            return (succeeded, failed, statuses)
        }
    }

    init(connection: HTTP2ClientConnection, request: HTTP2Request, variants: [HTTP2Request], concurrency: Int,
         limit: Int?, stopAt: HTTP2Deadline, tally: LoadTally, done: @escaping @Sendable () -> Void) {
        self.connection = connection
        self.request = request
        self.variants = variants.map(Variant.init)
        self.concurrency = concurrency
        self.limit = limit
        self.stopAt = stopAt
        self.tally = tally
        self.done = done
    }

    func start() {
        state.withLock { $0.onResult = { [self] result in didFinish(result) } }
        if limit == nil {
            connection.loop.schedule(at: stopAt) { [self] in
                state.withLock { $0.stopped = true }
                finishIfIdle()
            }
        }
        for _ in 0..<concurrency { sendOne() }
        finishIfIdle()
    }

    private func sendOne() {
        guard let next = state.withLock({ $0.nextSend(limit: limit, of: variants.count) }) else { return }
        submit(next)
    }

    /// Sends `request`, or variant `next.index`. (Two calls rather than one with a chosen request, which would be a
    /// copy of it.)
    private func submit(_ next: (index: Int, completion: HTTP2ClientConnection.Completion)) {
        if variants.isEmpty {
            connection.submit(request, completion: next.completion)
        } else {
            connection.submit(variants[next.index].request, completion: next.completion)
        }
    }

    /// Counts the answer, sends the next request and reports when finished, under one lock.
    private func didFinish(_ result: Result<HTTP2Response, HTTP2Error>) {
        let stopOnFailure = !connection.isAcceptingRequests
        let (next, totals) = state.withLock { state in
            state.count(result, stopOnFailure: stopOnFailure)
            return (state.nextSend(limit: limit, of: variants.count), state.finishIfIdle())
        }
        if let next { submit(next) }
        if let totals { report(totals) }
    }

    private func finishIfIdle() {
        if let totals = state.withLock({ $0.finishIfIdle() }) { report(totals) }
    }

    private func report(_ totals: (succeeded: Int, failed: Int, statuses: [Int: Int])) {
        tally.merge(succeeded: totals.succeeded, failed: totals.failed, statuses: totals.statuses)
        done()
    }
}
