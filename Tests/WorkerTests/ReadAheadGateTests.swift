import Foundation
import Testing

@testable import Worker

@Suite struct ReadAheadGateTests {
    func gate(perPartition: Int = 500, total: Int = 5_000, timeout: Duration = .seconds(5)) -> ReadAheadGate<Int> {
        var configuration = ReadAheadGate<Int>.Configuration()
        configuration.maxHeldPerPartition = perPartition
        configuration.maxHeld = total
        configuration.timeout = timeout
        return ReadAheadGate(configuration: configuration)
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
        #expect(last.passes && last.released == [1, 2] && !last.releasedAtLimit)
        #expect(gate.offer(4, lane: 0, offset: 8, isCallsTopic: true, highWatermark: 8, isIncoming: true).passes)
        #expect(gate.heldCount == 0)
    }

    @Test func boundsLetHeldEventsGoAndTheReadAheadGoesOn() {
        let lane = gate(perPartition: 2)
        _ = lane.assign(lanes: [0])
        #expect(!lane.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true).passes)
        let full = lane.offer(2, lane: 0, offset: 1, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        #expect(!full.passes && full.released == [1, 2] && full.releasedAtLimit, "a full lane lets go, the offered event with them")
        #expect(!lane.offer(3, lane: 0, offset: 2, isCallsTopic: true, highWatermark: 100, isIncoming: true).passes, "still reading ahead")

        let all = gate(perPartition: 10, total: 3)
        _ = all.assign(lanes: [0, 1])
        _ = all.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        _ = all.offer(2, lane: 0, offset: 1, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        let total = all.offer(3, lane: 1, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        #expect(total.released == [1, 2, 3] && total.releasedAtLimit, "all lanes together are bounded too")
    }

    /// The timer gives up only after the calls partition delivered nothing for the timeout, and only for its epoch.
    @Test func theTimerEndsTheReadAheadOnlyWithoutProgress() throws {
        let gate = gate(timeout: .milliseconds(200))
        _ = gate.assign(lanes: [0])
        let first = gate.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        let epoch = try #require(first.timerEpoch)
        guard case .nothing = gate.expire(lane: 0, epoch: epoch + 1000) else { Issue.record("a stale timer acts"); return }
        guard case .later = gate.expire(lane: 0, epoch: epoch) else { Issue.record("progress just now: look again later"); return }
        Thread.sleep(forTimeInterval: 0.25)
        guard case .released(let held) = gate.expire(lane: 0, epoch: epoch) else { Issue.record("no progress: let go"); return }
        #expect(held == [1])
        #expect(gate.offer(2, lane: 0, offset: 1, isCallsTopic: true, highWatermark: 100, isIncoming: true).passes, "it gave up")
    }

    @Test func revokeAndShutdownReturnWhatIsHeld() {
        let gate = gate()
        _ = gate.assign(lanes: [0, 1])
        _ = gate.offer(1, lane: 0, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        _ = gate.offer(2, lane: 1, offset: 0, isCallsTopic: true, highWatermark: 100, isIncoming: true)
        #expect(gate.revoke(lanes: [0]) == [1])
        #expect(gate.releaseAll() == [2])
        #expect(gate.heldCount == 0)
    }
}
