import Foundation
import TestSupport
import Testing

@testable import Worker

/// An event as the read-ahead tests offer it: a number to tell it by, and where its record was read.
struct OfferedEvent: ReadAheadItem {
    let id: Int
    let lane: Int32
    let offset: Int64
    let isCallsTopic: Bool
    let highWatermark: Int64?
    let isIncoming: Bool
    let origin: Int64?
}

extension ReadAheadGate where Item == OfferedEvent {
    /// The event `id` offered alone.
    func offer(
        _ id: Int, lane: Int32, offset: Int64, isCallsTopic: Bool, highWatermark: Int64?, isIncoming: Bool,
        origin: Int64? = nil
    ) -> Verdict {
        offer([OfferedEvent(id: id, lane: lane, offset: offset, isCallsTopic: isCallsTopic, highWatermark: highWatermark,
                            isIncoming: isIncoming, origin: origin)])[0]
    }
}

@Suite struct ReadAheadGateTests {
    /// A gate without backlog scans (the bounded read-ahead) unless `scans`, on `clock` (time passes when told).
    func gate(
        perPartition: Int = 500, total: Int = 5_000, timeout: Duration = .seconds(5), scans: Bool = false,
        clock: ManualWallClock = ManualWallClock()
    ) -> ReadAheadGate<OfferedEvent> {
        var configuration = ReadAheadGate<OfferedEvent>.Configuration()
        configuration.maxHeldPerPartition = perPartition
        configuration.maxHeld = total
        configuration.timeout = timeout
        configuration.scansBacklog = scans
        return ReadAheadGate(configuration: configuration, clock: clock)
    }

    @Test func unassignedLanesAndStopEventsPass() {
        let gate = gate()
        #expect(gate.offer(1, lane: 3, offset: 0, isCallsTopic: true, highWatermark: 10, isIncoming: true).passes)
        _ = gate.assign(lanes: [0])
        #expect(gate.offer(2, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 10, isIncoming: false).passes)
    }

    @Test func incomingWaitsUntilTheCallsPartitionReachesItsEnd() {
        let gate = gate()
        _ = gate.assign(lanes: [0])
        let first = gate.offer(1, lane: 0, offset: 5, isCallsTopic: true, highWatermark: 8, isIncoming: true)
        #expect(!first.passes && first.timerEpoch != nil)
        let retry = gate.offer(2, lane: 0, offset: 40, isCallsTopic: false, highWatermark: 50, isIncoming: true)
        #expect(!retry.passes && retry.timerEpoch == nil, "a retry tier record of the lane waits too, one timer per lane")
        let last = gate.offer(3, lane: 0, offset: 7, isCallsTopic: true, highWatermark: 8, isIncoming: true)
        #expect(last.passes && last.released.map(\.id) == [1, 2] && last.releasedEarly == nil)
        #expect(gate.offer(4, lane: 0, offset: 8, isCallsTopic: true, highWatermark: 8, isIncoming: true).passes)
        #expect(gate.heldCount == 0)
    }

    @Test func boundsLetHeldEventsGoAndTheReadAheadGoesOn() {
        let lane = gate(perPartition: 2)
        _ = lane.assign(lanes: [0])
        #expect(!lane.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true).passes)
        let full = lane.offer(2, lane: 0, offset: 1, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        #expect(!full.passes && full.released.map(\.id) == [1, 2] && full.releasedEarly == .limit, "a full lane lets go, the offered event with them")
        #expect(!lane.offer(3, lane: 0, offset: 2, isCallsTopic: true, highWatermark: 100, isIncoming: true).passes, "still reading ahead")

        let all = gate(perPartition: 10, total: 3)
        _ = all.assign(lanes: [0, 1])
        _ = all.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        _ = all.offer(2, lane: 0, offset: 1, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        let total = all.offer(3, lane: 1, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        #expect(total.released.map(\.id) == [1, 2, 3] && total.releasedEarly == .limit, "all lanes together are bounded too")
    }

    /// The timer gives up only after the calls partition delivered nothing for the timeout, and only for its epoch.
    @Test func theTimerEndsTheReadAheadOnlyWithoutProgress() throws {
        let clock = ManualWallClock()
        let gate = gate(timeout: .milliseconds(200), clock: clock)
        _ = gate.assign(lanes: [0])
        let first = gate.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        let epoch = try #require(first.timerEpoch)
        guard case .nothing = gate.expire(lane: 0, epoch: epoch + 1000) else { Issue.record("a stale timer acts"); return }
        guard case .later = gate.expire(lane: 0, epoch: epoch) else { Issue.record("progress just now: look again later"); return }
        clock.advance(by: .milliseconds(199))
        guard case .later = gate.expire(lane: 0, epoch: epoch) else { Issue.record("not yet the timeout"); return }
        clock.advance(by: .milliseconds(1))
        guard case .released(let held) = gate.expire(lane: 0, epoch: epoch) else { Issue.record("no progress: let go"); return }
        #expect(held.map(\.id) == [1])
        #expect(gate.offer(2, lane: 0, offset: 1, isCallsTopic: true, highWatermark: 100, isIncoming: true).passes, "it gave up")
    }

    @Test func revokeAndShutdownReturnWhatIsHeld() {
        let gate = gate()
        _ = gate.assign(lanes: [0, 1])
        _ = gate.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        _ = gate.offer(2, lane: 1, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        #expect(gate.revoke(lanes: [0]).map(\.id) == [1])
        #expect(gate.releaseAll().map(\.id) == [2])
        #expect(gate.heldCount == 0)
    }

    /// With scans, a lane's first record asks for one over its backlog (none without a backlog); while it runs the
    /// limits let nothing of that lane go (other lanes are bounded as before) and the timer waits for it.
    @Test func aScanIsAskedForOnceAndHoldsBeyondTheLimits() throws {
        let clock = ManualWallClock()
        let gate = gate(perPartition: 2, total: 3, timeout: .milliseconds(1), scans: true, clock: clock)
        _ = gate.assign(lanes: [0, 1, 2])
        #expect(gate.offer(1, lane: 2, offset: 9, isCallsTopic: true, highWatermark: 10, isIncoming: true).scan == nil,
                "no backlog, no scan")
        let retry = gate.offer(2, lane: 0, offset: 3, isCallsTopic: false, highWatermark: 7, isIncoming: true)
        #expect(retry.scan == nil && !retry.passes, "a retry tier record does not measure the backlog")
        let first = gate.offer(3, lane: 0, offset: 40, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        let scan = try #require(first.scan)
        #expect(scan.from == 40 && scan.to == 100 && !first.passes)
        for item in 4...6 {
            let verdict = gate.offer(item, lane: 0, offset: Int64(37 + item), isCallsTopic: true, highWatermark: 100, isIncoming: true)
            #expect(!verdict.passes && verdict.released.isEmpty && verdict.scan == nil, "held while scanning: \(item)")
        }
        // Lane 1 holds a retry tier's record before its calls partition delivered anything: not scanning.
        let other = gate.offer(7, lane: 1, offset: 0, isCallsTopic: false, highWatermark: 100, isIncoming: true)
        #expect(other.released.map(\.id) == [7] && other.releasedEarly == .limit, "all lanes' bound lets go only the lane not scanning")
        #expect(gate.isScanning(scan))
        clock.advance(by: .milliseconds(10))
        guard case .later = gate.expire(lane: 0, epoch: try #require(retry.timerEpoch)) else {
            Issue.record("the timer must wait for the scan")
            return
        }
        let done = gate.scanFinished(scan, completed: true)
        #expect(done.released.map(\.id) == [2, 3, 4, 5, 6] && done.releasedEarly == nil)
        #expect(!gate.isScanning(scan))
        #expect(gate.offer(8, lane: 0, offset: 44, isCallsTopic: true, highWatermark: 100, isIncoming: true).passes)
    }

    /// A failed scan leaves a bounded read-ahead (letting go at once what exceeds the limit); results for another
    /// assignment of the lane, or after the lane read through its backlog, change nothing.
    @Test func aFailedOrStaleScanResult() throws {
        let gate = gate(perPartition: 2, scans: true)
        _ = gate.assign(lanes: [0])
        let old = try #require(gate.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 10, isIncoming: true).scan)
        #expect(gate.revoke(lanes: [0]).map(\.id) == [1])
        _ = gate.assign(lanes: [0])
        let scan = try #require(gate.offer(2, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 10, isIncoming: true).scan)
        #expect(scan.generation != old.generation && !gate.isScanning(old))
        #expect(gate.scanFinished(old, completed: true).released.isEmpty, "stale")
        _ = gate.offer(3, lane: 0, offset: 1, isCallsTopic: true, highWatermark: 10, isIncoming: true)
        let failed = gate.scanFinished(scan, completed: false)
        #expect(failed.released.map(\.id) == [2, 3] && failed.releasedEarly == .limit)
        #expect(!gate.offer(4, lane: 0, offset: 2, isCallsTopic: true, highWatermark: 10, isIncoming: true).passes, "still reading ahead")
        #expect(gate.offer(5, lane: 0, offset: 9, isCallsTopic: true, highWatermark: 10, isIncoming: true).released.map(\.id) == [4])
        #expect(gate.scanFinished(scan, completed: true).released.isEmpty, "read through")
    }

    /// A retry-tier incoming record whose first hop lies before what the lane reads itself (here its calls partition
    /// has delivered nothing) waits for a history scan from that hop to the high watermark. Once complete it goes,
    /// and every later one from that hop on goes at once; an older one waits for a scan down to it.
    @Test func aRetryFromBeforeTheLanesOwnReadingWaitsForAHistoryScan() throws {
        let gate = gate(scans: true)
        _ = gate.assign(lanes: [0])
        let first = gate.offer(1, lane: 0, offset: 3, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 50)
        let scan = try #require(first.scan)
        #expect(!first.passes && scan.kind == .history && scan.lane == 0 && scan.from == 50 && scan.to == nil)
        let older = gate.offer(2, lane: 0, offset: 4, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 40)
        #expect(!older.passes && older.scan == nil, "one scan at a time")
        #expect(gate.offer(3, lane: 0, offset: 5, isCallsTopic: false, highWatermark: 9, isIncoming: false, origin: 30).passes,
                "a stop event goes")
        #expect(gate.heldCount == 2 && gate.isScanning(scan))
        let done = gate.scanFinished(scan, completed: true)
        #expect(done.released.map(\.id) == [1] && done.releasedEarly == nil)
        let next = try #require(done.scan)
        #expect(next.kind == .history && next.from == 40 && next.to == 50, "down to the older hop, up to what is known")
        #expect(gate.offer(4, lane: 0, offset: 6, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 50).passes,
                "known from 50 on")
        #expect(gate.scanFinished(next, completed: true).released.map(\.id) == [2])
        #expect(gate.heldCount == 0 && !gate.isScanning(next))
        #expect(gate.offer(5, lane: 0, offset: 7, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 40).passes)
    }

    /// A retry whose first hop is far before the lane's first record (a forged or rewritten `x-original-offset`, 0
    /// here) waits for a history scan from `historyReach` records before that first record, not from the log start;
    /// once it completes the retry goes, and a second such retry goes at once.
    @Test func aHistoryScanReachesBackAtMostHistoryReachRecords() throws {
        var configuration = ReadAheadGate<OfferedEvent>.Configuration()
        configuration.scansBacklog = true
        configuration.historyReach = 1_000
        let gate = ReadAheadGate<OfferedEvent>(configuration: configuration)
        _ = gate.assign(lanes: [0])
        #expect(gate.offer(1, lane: 0, offset: 5_000_000, isCallsTopic: true, highWatermark: 5_000_001, isIncoming: true).passes)
        let forged = gate.offer(2, lane: 0, offset: 3, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 0)
        let scan = try #require(forged.scan)
        #expect(!forged.passes && scan.kind == .history && scan.from == 4_999_000)
        #expect(gate.scanFinished(scan, completed: true).released.map(\.id) == [2])
        #expect(gate.offer(3, lane: 0, offset: 4, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 0).passes)
    }

    /// A retry whose first hop is at or after the calls partition's first record since the assignment needs no
    /// history: the consumer (and the backlog scan) read its hang-up. One from before that waits for a history scan;
    /// records without a known first hop, and without scans, are the read-ahead's as before.
    @Test func onlyARetryFromBeforeTheLanesFirstRecordNeedsHistory() throws {
        let gate = gate(scans: true)
        _ = gate.assign(lanes: [0])
        #expect(gate.offer(1, lane: 0, offset: 100, isCallsTopic: true, highWatermark: 101, isIncoming: true).passes, "no backlog")
        #expect(gate.offer(2, lane: 0, offset: 7, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 100).passes)
        #expect(gate.offer(3, lane: 0, offset: 8, isCallsTopic: false, highWatermark: 9, isIncoming: true).passes, "first hop unknown")
        let older = gate.offer(4, lane: 0, offset: 8, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 99)
        #expect(!older.passes && older.scan?.kind == .history && older.scan?.from == 99)
        let unscanned = self.gate(scans: false)
        _ = unscanned.assign(lanes: [0])
        _ = unscanned.offer(1, lane: 0, offset: 100, isCallsTopic: true, highWatermark: 101, isIncoming: true)
        #expect(unscanned.offer(2, lane: 0, offset: 8, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 99).passes)
    }

    /// A lane runs one scan at a time: a backlog scan asked for during a history scan waits for it (the limits hold
    /// the lane meanwhile), and a history scan waits for a running backlog scan.
    @Test func backlogAndHistoryScansOfALaneTakeTurns() throws {
        let gate = gate(perPartition: 2, scans: true)
        _ = gate.assign(lanes: [0, 1])
        let history = try #require(
            gate.offer(1, lane: 0, offset: 0, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 5).scan)
        let calls = gate.offer(2, lane: 0, offset: 20, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        #expect(calls.scan == nil && !calls.passes, "the backlog scan waits")
        let beyond = gate.offer(3, lane: 0, offset: 21, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        #expect(!beyond.passes && beyond.released.isEmpty, "held beyond the limit: the lane is scanning")
        let afterHistory = gate.scanFinished(history, completed: true)
        #expect(afterHistory.released.map(\.id) == [1])
        let backlog = try #require(afterHistory.scan)
        #expect(backlog.kind == .backlog && backlog.from == 20 && backlog.to == 100 && gate.isScanning(backlog))

        let first = try #require(gate.offer(4, lane: 1, offset: 10, isCallsTopic: true, highWatermark: 50, isIncoming: true).scan)
        let retry = gate.offer(5, lane: 1, offset: 0, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 3)
        #expect(first.kind == .backlog && !retry.passes && retry.scan == nil, "the history scan waits")
        let afterBacklog = gate.scanFinished(first, completed: true)
        #expect(afterBacklog.released.map(\.id) == [4])
        #expect(afterBacklog.scan?.kind == .history && afterBacklog.scan?.from == 3)
    }

    /// A failed history scan lets its records go, marked as unscanned; a revoked lane returns what waits for history,
    /// and a result for its earlier assignment changes nothing.
    @Test func aFailedOrRevokedHistoryScan() throws {
        let gate = gate(scans: true)
        _ = gate.assign(lanes: [0])
        let scan = try #require(gate.offer(1, lane: 0, offset: 0, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 5).scan)
        _ = gate.offer(2, lane: 0, offset: 1, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 3)
        let failed = gate.scanFinished(scan, completed: false)
        #expect(failed.released.map(\.id) == [1, 2] && failed.releasedEarly == .historyScanFailed && failed.scan == nil)
        let again = try #require(gate.offer(3, lane: 0, offset: 2, isCallsTopic: false, highWatermark: 9, isIncoming: true, origin: 5).scan,
                                 "nothing became known: the next record asks again")
        #expect(gate.revoke(lanes: [0]).map(\.id) == [3] && gate.heldCount == 0)
        _ = gate.assign(lanes: [0])
        #expect(!gate.isScanning(again))
        let stale = gate.scanFinished(again, completed: true)
        #expect(stale.released.isEmpty && stale.scan == nil)
    }
}
