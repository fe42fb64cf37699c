import Foundation
import TestSupport
import Testing
@testable import Worker

/// docs/call-handling.md, "Read-ahead of a newly assigned partition (ReadAheadGate)": one argument per row of its
/// table, and a check that the table has exactly these rows.
@Suite struct ReadAheadTableTests {
    static let section = "Read-ahead of a newly assigned partition (ReadAheadGate)"

    /// The rows of the table, by their first column.
    enum Row: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case notAssigned = "lane not assigned"
        case notIncoming = "event not incoming"
        case noBacklog = "first calls record, no backlog"
        case beforeTheEnd = "incoming before the end"
        case reachesTheEnd = "calls record reaches the end"
        case laneLimit = "lane limit reached"
        case allLanesLimit = "all-lanes limit reached"
        case timeout = "no progress for the timeout"
        case backlog = "first calls record with a backlog"
        case scanning = "lane scanning"
        case backlogComplete = "backlog scan complete"
        case backlogFailed = "backlog scan failed"
        case retryFromBefore = "retry from before the lane's first record"
        case retryFromOwnReading = "retry from the lane's own reading"
        case historyComplete = "history scan complete"
        case historyFailed = "history scan failed"
        case oneScanAtATime = "scan asked for while another runs"
        case revoked = "lane revoked"
        case shutdown = "shutdown"

        var testDescription: String { rawValue }
    }

    /// The gate of ``ReadAheadGateTests``: without backlog scans unless `scans`.
    /// The gate's clock: time passes only when a row lets it.
    let clock = ManualWallClock()

    func gate(perPartition: Int = 500, total: Int = 5_000, timeout: Duration = .seconds(5), scans: Bool = false)
        -> ReadAheadGate<OfferedEvent>
    {
        ReadAheadGateTests().gate(perPartition: perPartition, total: total, timeout: timeout, scans: scans, clock: clock)
    }

    @Test(arguments: Row.allCases)
    func row(_ row: Row) throws {
        switch row {
        case .notAssigned:
            let gate = gate()
            #expect(gate.calls(1, lane: 3, offset: 0, end: 10).passes)
            var configuration = ReadAheadGate<OfferedEvent>.Configuration()
            configuration.disabled = true
            let disabled = ReadAheadGate<OfferedEvent>(configuration: configuration)
            #expect(disabled.assign(lanes: [0]).isEmpty)
            #expect(disabled.calls(2, offset: 0, end: 10).passes)
        case .notIncoming:
            let gate = gate(scans: true)
            _ = gate.assign(lanes: [0])
            #expect(gate.retry(1, origin: 0, incoming: false).passes)
            #expect(gate.calls(2, offset: 0, end: 10, incoming: false).passes)
            #expect(gate.calls(3, offset: 1, end: 10, incoming: false).passes)
            #expect(gate.heldCount == 0)
        case .noBacklog:
            let gate = gate(scans: true)
            _ = gate.assign(lanes: [0, 1])
            let last = gate.calls(1, offset: 9, end: 10)
            #expect(last.passes && last.scan == nil)
            #expect(gate.retry(2).passes)
            #expect(gate.calls(3, lane: 1, offset: 12, end: 10).passes, "beyond the end")
            #expect(gate.heldCount == 0)
        case .beforeTheEnd:
            let gate = gate()
            _ = gate.assign(lanes: [0])
            let first = gate.calls(1, offset: 5, end: 8)
            #expect(!first.passes && first.timerEpoch != nil, "the first held event starts the timer")
            let retry = gate.retry(2)
            #expect(!retry.passes && retry.timerEpoch == nil, "a retry tier's record of the lane waits too")
            #expect(gate.heldCount == 2)
        case .reachesTheEnd:
            let gate = gate()
            _ = gate.assign(lanes: [0])
            _ = gate.calls(1, offset: 5, end: 8)
            _ = gate.retry(2)
            let end = gate.calls(3, offset: 7, end: 8, incoming: false)
            #expect(end.passes && end.released.map(\.id) == [1, 2] && end.releasedEarly == nil)
            #expect(gate.retry(4).passes)
            #expect(gate.heldCount == 0)
        case .laneLimit:
            let gate = gate(perPartition: 2)
            _ = gate.assign(lanes: [0])
            #expect(!gate.calls(1, offset: 0, end: 100).passes)
            let full = gate.calls(2, offset: 1, end: 100)
            #expect(!full.passes && full.released.map(\.id) == [1, 2] && full.releasedEarly == .limit)
            #expect(!gate.calls(3, offset: 2, end: 100).passes, "still reading ahead")
        case .allLanesLimit:
            let gate = gate(perPartition: 10, total: 3, scans: true)
            _ = gate.assign(lanes: [0, 1, 2])
            let scan = gate.calls(1, lane: 2, offset: 0, end: 100).scan
            #expect(scan?.kind == .backlog)
            _ = gate.retry(2)
            let total = gate.retry(3, lane: 1)
            #expect(total.released.map(\.id) == [2, 3] && total.releasedEarly == .limit, "every lane not scanning lets go")
            #expect(gate.heldCount == 1)
        case .timeout:
            let gate = gate(timeout: .milliseconds(50))
            _ = gate.assign(lanes: [0])
            let first = gate.calls(1, offset: 0, end: 100)
            let epoch = try #require(first.timerEpoch)
            guard case .nothing = gate.expire(lane: 0, epoch: epoch + 1_000) else {
                Issue.record("a stale timer finds nothing to do")
                return
            }
            guard case .later = gate.expire(lane: 0, epoch: epoch) else {
                Issue.record("progress just now: look again later")
                return
            }
            clock.advance(by: .milliseconds(50))
            guard case .released(let held) = gate.expire(lane: 0, epoch: epoch) else {
                Issue.record("no progress for the timeout: let go")
                return
            }
            #expect(held.map(\.id) == [1])
            #expect(gate.calls(2, offset: 1, end: 100).passes, "the lane stopped holding")
        case .backlog:
            let gate = gate(scans: true)
            _ = gate.assign(lanes: [0])
            let first = gate.calls(1, offset: 40, end: 100)
            let scan = try #require(first.scan)
            #expect(!first.passes && scan.kind == .backlog && scan.lane == 0 && scan.from == 40 && scan.to == 100)
            #expect(gate.calls(2, offset: 41, end: 100).scan == nil, "asked for once")
            let unscanned = self.gate(scans: false)
            _ = unscanned.assign(lanes: [0])
            #expect(unscanned.calls(1, offset: 40, end: 100).scan == nil)
        case .scanning:
            let gate = gate(perPartition: 2, total: 3, timeout: .milliseconds(1), scans: true)
            _ = gate.assign(lanes: [0])
            let first = gate.calls(1, offset: 40, end: 100)
            let scan = try #require(first.scan)
            for item in 2...5 {
                let verdict = gate.calls(item, offset: Int64(39 + item), end: 100)
                #expect(!verdict.passes && verdict.released.isEmpty, "held beyond both limits: \(item)")
            }
            #expect(gate.isScanning(scan) && gate.heldCount == 5)
            clock.advance(by: .milliseconds(10))
            guard case .later = gate.expire(lane: 0, epoch: try #require(first.timerEpoch)) else {
                Issue.record("the timer waits for the scan")
                return
            }
        case .backlogComplete:
            let gate = gate(perPartition: 2, scans: true)
            _ = gate.assign(lanes: [0])
            let scan = try #require(gate.calls(1, offset: 40, end: 100).scan)
            _ = gate.calls(2, offset: 41, end: 100)
            _ = gate.calls(3, offset: 42, end: 100)
            let done = gate.scanFinished(scan, completed: true)
            #expect(done.released.map(\.id) == [1, 2, 3] && done.releasedEarly == nil)
            #expect(!gate.isScanning(scan))
            #expect(gate.calls(4, offset: 43, end: 100).passes)
        case .backlogFailed:
            let gate = gate(perPartition: 2, scans: true)
            _ = gate.assign(lanes: [0, 1])
            let full = try #require(gate.calls(1, offset: 0, end: 10).scan)
            _ = gate.calls(2, offset: 1, end: 10)
            let failed = gate.scanFinished(full, completed: false)
            #expect(failed.released.map(\.id) == [1, 2] && failed.releasedEarly == .limit)
            #expect(!gate.calls(3, offset: 2, end: 10).passes, "bounded read-ahead")
            #expect(gate.calls(4, offset: 9, end: 10).released.map(\.id) == [3], "reading through ends it")
            let short = try #require(gate.calls(5, lane: 1, offset: 0, end: 10).scan)
            let shortFailed = gate.scanFinished(short, completed: false)
            #expect(shortFailed.released.isEmpty && shortFailed.releasedEarly == nil, "below the limit: still held")
            #expect(gate.heldCount == 1)
        case .retryFromBefore:
            let gate = gate(perPartition: 1, scans: true)
            _ = gate.assign(lanes: [0, 1])
            #expect(gate.calls(1, offset: 100, end: 101).passes)
            let older = gate.retry(2, origin: 99)
            let scan = try #require(older.scan)
            #expect(!older.passes && older.released.isEmpty, "held apart: the lane's limit does not count it")
            #expect(scan.kind == .history && scan.from == 99 && scan.to == nil, "up to the high watermark")
            let early = gate.retry(3, lane: 1, origin: 500)
            #expect(!early.passes && early.scan?.kind == .history && early.scan?.from == 500,
                    "any origin while the calls partition delivered nothing")
            var configuration = ReadAheadGate<OfferedEvent>.Configuration()
            configuration.historyReach = 1_000
            let reach = ReadAheadGate<OfferedEvent>(configuration: configuration)
            _ = reach.assign(lanes: [0])
            _ = reach.calls(1, offset: 5_000_000, end: 5_000_001)
            let forged = reach.retry(2, origin: 0)
            #expect(forged.scan?.from == 4_999_000, "never more than historyReach before the lane's first record")
        case .retryFromOwnReading:
            let gate = gate(scans: true)
            _ = gate.assign(lanes: [0])
            let scan = try #require(gate.calls(1, offset: 40, end: 100).scan)
            let own = gate.retry(2, origin: 40)
            #expect(!own.passes && own.scan == nil, "held by the read-ahead, no history scan")
            let unknown = gate.retry(3)
            #expect(!unknown.passes && unknown.scan == nil)
            #expect(gate.scanFinished(scan, completed: true).released.map(\.id) == [1, 2, 3])
            let unscanned = self.gate(scans: false)
            _ = unscanned.assign(lanes: [0])
            _ = unscanned.calls(1, offset: 40, end: 100)
            let old = unscanned.retry(2, origin: 1)
            #expect(!old.passes && old.scan == nil)
            #expect(unscanned.calls(3, offset: 99, end: 100).released.map(\.id) == [1, 2])
        case .historyComplete:
            let gate = gate(scans: true)
            _ = gate.assign(lanes: [0])
            let scan = try #require(gate.retry(1, origin: 50).scan)
            _ = gate.retry(2, origin: 40)
            let done = gate.scanFinished(scan, completed: true)
            #expect(done.released.map(\.id) == [1] && done.releasedEarly == nil)
            let next = try #require(done.scan)
            #expect(next.kind == .history && next.from == 40 && next.to == 50, "down to the older one, up to the start")
            #expect(gate.retry(3, origin: 50).passes)
            #expect(gate.scanFinished(next, completed: true).released.map(\.id) == [2])
            #expect(gate.retry(4, origin: 40).passes)
            #expect(gate.heldCount == 0)
        case .historyFailed:
            let gate = gate(scans: true)
            _ = gate.assign(lanes: [0])
            let scan = try #require(gate.retry(1, origin: 5).scan)
            _ = gate.retry(2, origin: 3)
            let failed = gate.scanFinished(scan, completed: false)
            #expect(failed.released.map(\.id) == [1, 2] && failed.releasedEarly == .historyScanFailed && failed.scan == nil)
            let again = gate.retry(3, origin: 5)
            #expect(!again.passes && again.scan?.kind == .history, "the next such retry asks again")
        case .oneScanAtATime:
            let gate = gate(perPartition: 2, scans: true)
            _ = gate.assign(lanes: [0, 1])
            let history = try #require(gate.retry(1, origin: 5).scan)
            let calls = gate.calls(2, offset: 20, end: 100)
            #expect(calls.scan == nil && !calls.passes, "the backlog scan waits")
            let beyond = gate.calls(3, offset: 21, end: 100)
            #expect(!beyond.passes && beyond.released.isEmpty, "counts as scanning meanwhile")
            let afterHistory = gate.scanFinished(history, completed: true)
            #expect(afterHistory.released.map(\.id) == [1])
            #expect(afterHistory.scan?.kind == .backlog && afterHistory.scan?.from == 20)
            let backlog = try #require(gate.calls(4, lane: 1, offset: 10, end: 50).scan)
            let retry = gate.retry(5, lane: 1, origin: 3)
            #expect(!retry.passes && retry.scan == nil, "the history scan waits")
            let afterBacklog = gate.scanFinished(backlog, completed: true)
            #expect(afterBacklog.released.map(\.id) == [4] && afterBacklog.scan?.kind == .history && afterBacklog.scan?.from == 3)
        case .revoked:
            let gate = gate(scans: true)
            _ = gate.assign(lanes: [0])
            let history = try #require(gate.retry(1, origin: 5).scan)
            _ = gate.calls(2, offset: 10, end: 100)
            #expect(gate.revoke(lanes: [0]).map(\.id) == [2, 1] && gate.heldCount == 0, "the read-ahead's, then history's")
            _ = gate.assign(lanes: [0])
            #expect(!gate.isScanning(history))
            let stale = gate.scanFinished(history, completed: true)
            #expect(stale.released.isEmpty && stale.scan == nil)
        case .shutdown:
            let gate = gate()
            _ = gate.assign(lanes: [0, 1])
            _ = gate.calls(1, offset: 0, end: 100)
            _ = gate.calls(2, lane: 1, offset: 0, end: 100)
            #expect(gate.releaseAll().map(\.id) == [1, 2] && gate.heldCount == 0)
            #expect(gate.calls(3, offset: 1, end: 100).passes)
        }
    }

    @Test func theDocumentHasExactlyTheseRows() throws {
        #expect(try CallHandlingDoc.keys(section: Self.section) == Row.allCases.map(\.rawValue))
    }
}

extension ReadAheadGate where Item == OfferedEvent {
    /// A record of calls partition `lane` at `offset`, whose high watermark at assignment is `end`.
    fileprivate func calls(_ item: Int, lane: Int32 = 0, offset: Int64, end: Int64, incoming: Bool = true) -> Verdict {
        offer(item, lane: lane, offset: offset, isCallsTopic: true, highWatermark: end, isIncoming: incoming)
    }

    /// A record of the retry tier's partition `lane` whose first hop was the calls topic's offset `origin`.
    fileprivate func retry(_ item: Int, lane: Int32 = 0, origin: Int64? = nil, incoming: Bool = true) -> Verdict {
        offer(item, lane: lane, offset: 0, isCallsTopic: false, highWatermark: nil, isIncoming: incoming,
              origin: origin)
    }
}
