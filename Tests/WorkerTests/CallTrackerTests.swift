@testable import Telemetry
import TestSupport
import Testing
@testable import Worker

@Suite struct CallTrackerTests {
    let clock = ManualWallClock(millisecondsSinceEpoch: 1_000_000)

    func entry(_ item: String, _ type: CallEventType, call: String = "c1", deadline: Int64 = 1_030_000)
        -> TrackedEvent
    {
        TrackedEvent(name: item, callKey: .call(call), eventType: type, ringDeadlineMilliseconds: deadline)
    }

    @Test func oneInFlightPerCallInOrder() {
        let tracker = CallTracker<TrackedEvent>(clock: clock)
        #expect(tracker.admit(entry("in", .incoming)).decision == .sendNow)
        #expect(tracker.admit(entry("other", .incoming, call: "c2")).decision == .sendNow)
        let hangup = tracker.admit(entry("hup", .hangup))
        #expect(hangup.decision == .queued)
        #expect(hangup.cancelledWaiting.isEmpty)
        let releases = tracker.complete(.call("c1"))
        #expect(releases.map(\.item.name) == ["hup"])
        #expect(releases.map(\.decision) == [.sendNow])
        #expect(tracker.complete(.call("c1")).isEmpty)
        #expect(tracker.counts.activeCalls == 1)
        #expect(tracker.complete(.call("c2")).isEmpty)
        #expect(tracker.counts.activeCalls == 0)
    }

    @Test func expiredIncomingIsNeverSent() {
        let tracker = CallTracker<TrackedEvent>(clock: clock)
        #expect(tracker.admit(entry("late", .incoming, deadline: 1_000_000)).decision == .expired)
        #expect(tracker.admit(entry("ok", .incoming, deadline: 1_000_001)).decision == .sendNow)
        // A waiting incoming that expires while queued is released as expired.
        #expect(tracker.admit(entry("queued", .incoming, deadline: 1_005_000)).decision == .queued)
        clock.advance(by: .milliseconds(5_000))
        let releases = tracker.complete(.call("c1"))
        #expect(releases.map(\.decision) == [.expired])
        #expect(tracker.counts.activeCalls == 0)
    }

    @Test func hangupCancelsWaitingIncomingButIsSent() {
        let tracker = CallTracker<TrackedEvent>(clock: clock)
        #expect(tracker.admit(entry("hup0", .hangup)).decision == .sendNow)  // an earlier stop push in flight
        #expect(tracker.admit(entry("in", .incoming, call: "c1")).decision == .cancelled)
        let tracker2 = CallTracker<TrackedEvent>(clock: clock)
        #expect(tracker2.admit(entry("in1", .incoming)).decision == .sendNow)
        #expect(tracker2.admit(entry("in2", .incoming)).decision == .queued)
        let hangup = tracker2.admit(entry("hup", .hangup))
        #expect(hangup.decision == .queued)
        #expect(hangup.cancelledWaiting.map(\.name) == ["in2"])
        #expect(tracker2.hasEnded(.call("c1")))
        let releases = tracker2.complete(.call("c1"))
        #expect(releases.map(\.item.name) == ["hup"])
        #expect(releases.first?.decision == .sendNow)
    }

    @Test func retriedIncomingAfterHangupIsCancelled() {
        let tracker = CallTracker<TrackedEvent>(clock: clock)
        #expect(tracker.admit(entry("hup", .missed)).decision == .sendNow)
        _ = tracker.complete(.call("c1"))
        clock.advance(by: .milliseconds(5_000))
        #expect(tracker.admit(entry("retry", .incoming)).decision == .cancelled)
        #expect(tracker.admit(entry("other", .incoming, call: "c9")).decision == .sendNow)
    }

    @Test func endedCallMemoryIsBoundedByAgeAndCount() {
        var configuration = CallTracker<TrackedEvent>.Configuration()
        configuration.endedCallCapacity = 3
        configuration.endedCallRetention = .seconds(10)
        let tracker = CallTracker<TrackedEvent>(configuration: configuration, clock: clock)
        for index in 0..<5 { tracker.markEnded(.call("c\(index)")) }
        _ = tracker.hasEnded(.call("x"))
        #expect(tracker.counts.endedCalls == 3)
        #expect(!tracker.hasEnded(.call("c0")))
        #expect(!tracker.hasEnded(.call("c1")))
        #expect(tracker.hasEnded(.call("c4")))
        clock.advance(by: .milliseconds(10_000))
        #expect(!tracker.hasEnded(.call("c4")))
        #expect(tracker.counts.endedCalls == 0)
        // Re-ending a call refreshes it.
        tracker.markEnded(.call("a"))
        clock.advance(by: .milliseconds(6_000))
        tracker.markEnded(.call("a"))
        clock.advance(by: .milliseconds(6_000))
        #expect(tracker.hasEnded(.call("a")))
    }

    @Test func concurrentUseKeepsEveryCallSerial() async {
        let tracker = CallTracker<TrackedEvent>(clock: clock)
        await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var sent = 0
                    for index in 0..<500 {
                        let call = "c\((task * 500 + index) % 50)"
                        let admission = tracker.admit(TrackedEvent(name: "\(index)", callKey: .call(call), eventType: .hangup, ringDeadlineMilliseconds: 0))
                        if admission.decision == .sendNow {
                            sent += 1
                            var releases = tracker.complete(.call(call))
                            while releases.contains(where: { $0.decision == .sendNow }) {
                                sent += 1
                                releases = tracker.complete(.call(call))
                            }
                        }
                    }
                    return sent
                }
            }
            var total = 0
            for await sent in group { total += sent }
            #expect(total == 4000)
        }
        #expect(tracker.counts.activeCalls == 0)
    }
}

/// An event as the tracker tests give it: a name to tell it by.
struct TrackedEvent: CallTrackerItem {
    let name: String
    let callKey: CallKey
    let eventType: CallEventType
    let ringDeadlineMilliseconds: Int64
}

extension CallKey {
    /// The call `callID` of the one app the tracker tests use.
    static func call(_ callID: String) -> CallKey { CallKey(topic: "com.example.app", callID: callID) }
}
