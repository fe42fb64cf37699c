@testable import APNsMock
@testable import EmbeddedPipeline
import Foundation
@testable import Telemetry
import TestSupport
import Testing

@testable import Worker

/// ARCHITECTURE.md's table of where the dispatcher is entered names every ``DispatcherEntry`` and the threads it runs
/// on; a pipeline with a backlog to scan, a second worker joining, dead tokens, 5xx answers, GOAWAYs and dropped
/// connections enters the dispatcher only from those threads.
@Suite(.serialized) struct DispatcherEntryThreadTests {
    /// The table's threads per entry (thread groups as ``ThreadName/group(_:)`` names them).
    static func documented() throws -> [String: Set<String>] {
        let map = try String(contentsOf: PackageRoot.url.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let parts = map.components(separatedBy: "## Where the dispatcher is entered")
        guard parts.count == 2 else { return [:] }
        let table = parts[1].components(separatedBy: "\n## ")[0]
        let row = try NSRegularExpression(pattern: #"^\| `([a-z-]+)` \| ([^|]+) \|"#, options: .anchorsMatchLines)
        let name = try NSRegularExpression(pattern: #"`([a-z0-9-]+)`"#)
        var threads: [String: Set<String>] = [:]
        for match in row.matches(in: table, range: NSRange(table.startIndex..., in: table)) {
            let entry = String(table[Range(match.range(at: 1), in: table)!])
            let cell = String(table[Range(match.range(at: 2), in: table)!])
            threads[entry] = Set(name.matches(in: cell, range: NSRange(cell.startIndex..., in: cell)).map {
                String(cell[Range($0.range(at: 1), in: cell)!])
            })
        }
        return threads
    }

    @Test func theTableNamesEveryEntry() throws {
        let documented = try Self.documented()
        #expect(Set(documented.keys) == Set(DispatcherEntry.allCases.map(\.rawValue)), "table rows \(documented.keys.sorted())")
        for (entry, threads) in documented { #expect(!threads.isEmpty, "no thread named for `\(entry)`") }
    }

    @Test func everyEntryRunsOnTheThreadsTheTableNames() async throws {
        let documented = try Self.documented()
        var configuration = EmbeddedPipelineConfiguration()
        configuration.faults = APNsMockFaults(
            unregisteredTokens: CallTrafficGenerator.deadTokens, serviceUnavailableProbability: 0.1,
            goAwayAfterStreams: 100, dropConnectionProbability: 0.005)
        let pipeline = try EmbeddedPipeline(configuration: configuration)
        let generator = CallTrafficGenerator(producer: try pipeline.makeProducer(), bundleID: EndToEndTests.bundleID)
        // A backlog before the first worker starts: its partitions are scanned for hang-ups at assignment.
        let backlog = await generator.run(rate: 2_000, count: 400, duration: .seconds(10))
        let first = try pipeline.startWorker()
        first.dispatcher.entries.start()
        #expect(await Eventually.waitUntil(timeout: .seconds(30)) { EndToEndTests.consumed(pipeline.registry) >= backlog })
        // Live traffic while a second worker joins (partitions move, and their backlog is scanned again).
        let traffic = CallTrafficGenerator(producer: try pipeline.makeProducer(clientID: "live"), bundleID: EndToEndTests.bundleID)
        let live = Task { await traffic.run(rate: 300, count: 600, duration: .seconds(20), seed: 7) }
        try await Task.sleep(for: .milliseconds(500))
        let second = try pipeline.startWorker()
        second.dispatcher.entries.start()
        let produced = await live.value
        let settled = await Eventually.waitUntil(timeout: .seconds(60)) {
            EndToEndTests.terminal(pipeline) >= backlog + produced
                && WorkerMetrics(registry: pipeline.registry).inFlight.value == 0
        }
        let consumed = EndToEndTests.consumed(pipeline.registry)
        #expect(settled, "outcomes \(pipeline.outcomes) of \(backlog + produced) produced, \(consumed) consumed, in flight \(first.inFlightCount) + \(second.inFlightCount)")
        await pipeline.shutdown()  // the revokes of a shutdown included
        var seen: [DispatcherEntry: Set<String>] = [:]
        for worker in [first, second] { seen.merge(worker.dispatcher.entries.threads) { $0.union($1) } }

        print("dispatcher entries: " + seen.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.key.rawValue) on \($0.value.sorted().joined(separator: ", "))" }.joined(separator: "; "))
        for (entry, threads) in seen {
            let allowed = documented[entry.rawValue] ?? []
            #expect(threads.isSubset(of: allowed), "`\(entry.rawValue)` ran on \(threads.subtracting(allowed).sorted()), which ARCHITECTURE.md does not name")
        }
        // The event path's entries all ran (the timers only run on a read-ahead timeout or a failed produce).
        let path: [DispatcherEntry] = [.batch, .release, .rebalance, .answer, .delivery, .scanRecord, .scanEnd]
        for entry in path { #expect(seen[entry] != nil, "`\(entry.rawValue)` never entered") }
    }
}
