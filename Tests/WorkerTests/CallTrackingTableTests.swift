import Kafka
@testable import APNs
@testable import Telemetry
import TestSupport
import Testing
@testable import Worker

/// docs/call-handling.md, "Per-call ordering and cancellation (CallTracker)": one argument per row of its table, and
/// a check that the table has exactly these rows.
@Suite struct CallTrackingTableTests {
    static let section = "Per-call ordering and cancellation (CallTracker)"

    /// The rows of the table, by their first column.
    enum Row: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case endedIncoming = "incoming of an ended call"
        case pastDeadline = "incoming past its ring deadline"
        case stopEvent = "stop event"
        case nothingInFlight = "nothing of the call in flight"
        case oneInFlight = "an event of the call in flight"
        case finalNothingWaiting = "in-flight event final, nothing waiting"
        case waitingEnded = "waiting incoming of a call ended meanwhile"
        case waitingPastDeadline = "waiting incoming past its ring deadline"
        case waitingOtherwise = "waiting event otherwise"
        case retryOfEnded = "retry of an ended call's incoming"
        case endedElsewhere = "call ended elsewhere"

        var testDescription: String { rawValue }
    }

    static let stopTypes: [CallEventType] = [.hangup, .missed, .answeredElsewhere]

    /// The clock reads 1 000 000 ms; the default ring deadline is 30 s later.
    static func entry(_ item: String, _ type: CallEventType, call: String = "c1", deadline: Int64 = 1_030_000)
        -> TrackedEvent
    {
        TrackedEvent(name: item, callKey: .call(call), eventType: type, ringDeadlineMilliseconds: deadline)
    }

    @Test(arguments: Row.allCases)
    func row(_ row: Row) {
        let clock = ManualWallClock(millisecondsSinceEpoch: 1_000_000)
        let tracker = CallTracker<TrackedEvent>(clock: clock)
        let entry = Self.entry
        switch row {
        case .endedIncoming:
            #expect(tracker.admit(entry("hup", .hangup, "c1", 0)).decision == .sendNow)
            _ = tracker.complete(.call("c1"))
            #expect(tracker.admit(entry("in", .incoming, "c1", 1_030_000)).decision == .cancelled)
            #expect(tracker.admit(entry("late", .incoming, "c1", 1_000_000)).decision == .cancelled,
                    "cancelled, not expired: the ended call is checked first")
        case .pastDeadline:
            #expect(tracker.admit(entry("late", .incoming, "c1", 1_000_000)).decision == .expired)
            #expect(tracker.admit(entry("due", .incoming, "c1", 1_000_001)).decision == .sendNow)
        case .stopEvent:
            for (index, type) in Self.stopTypes.enumerated() {
                let call = "s\(index)"
                #expect(tracker.admit(entry("in1", .incoming, call, 1_030_000)).decision == .sendNow)
                #expect(tracker.admit(entry("in2", .incoming, call, 1_030_000)).decision == .queued)
                let stop = tracker.admit(entry("stop", type, call, 0))
                #expect(stop.decision == .queued && stop.cancelledWaiting.map(\.name) == ["in2"], "\(type)")
                #expect(tracker.hasEnded(.call(call)), "\(type)")
                let next = tracker.complete(.call(call))
                #expect(next.map(\.item.name) == ["stop"] && next.map(\.decision) == [.sendNow], "the stop event is sent")
            }
        case .nothingInFlight:
            #expect(tracker.admit(entry("in", .incoming, "c1", 1_030_000)).decision == .sendNow)
            #expect(tracker.admit(entry("other", .incoming, "c2", 1_030_000)).decision == .sendNow)
            #expect(tracker.counts.activeCalls == 2)
        case .oneInFlight:
            #expect(tracker.admit(entry("in", .incoming, "c1", 1_030_000)).decision == .sendNow)
            #expect(tracker.admit(entry("hup", .hangup, "c1", 0)).decision == .queued)
            #expect(tracker.admit(entry("missed", .missed, "c1", 0)).decision == .queued)
            #expect(tracker.complete(.call("c1")).map(\.item.name) == ["hup"])
            #expect(tracker.complete(.call("c1")).map(\.item.name) == ["missed"])
        case .finalNothingWaiting:
            #expect(tracker.admit(entry("hup", .hangup, "c1", 0)).decision == .sendNow)
            #expect(tracker.complete(.call("c1")).isEmpty)
            #expect(tracker.counts.activeCalls == 0 && tracker.counts.waitingEvents == 0)
            #expect(tracker.hasEnded(.call("c1")), "the ended mark stays")
        case .waitingEnded:
            #expect(tracker.admit(entry("in1", .incoming, "c1", 1_030_000)).decision == .sendNow)
            #expect(tracker.admit(entry("in2", .incoming, "c1", 1_030_000)).decision == .queued)
            tracker.markEnded(.call("c1"))
            #expect(tracker.complete(.call("c1")).map(\.decision) == [.cancelled])
        case .waitingPastDeadline:
            #expect(tracker.admit(entry("in1", .incoming, "c1", 1_030_000)).decision == .sendNow)
            #expect(tracker.admit(entry("in2", .incoming, "c1", 1_005_000)).decision == .queued)
            clock.advance(by: .milliseconds(5_000))
            #expect(tracker.complete(.call("c1")).map(\.decision) == [.expired])
            #expect(tracker.counts.activeCalls == 0)
        case .waitingOtherwise:
            #expect(tracker.admit(entry("in1", .incoming, "c1", 1_030_000)).decision == .sendNow)
            #expect(tracker.admit(entry("in2", .incoming, "c1", 1_005_000)).decision == .queued)
            #expect(tracker.admit(entry("in3", .incoming, "c1", 1_030_000)).decision == .queued)
            #expect(tracker.admit(entry("in4", .incoming, "c1", 1_030_000)).decision == .queued)
            clock.advance(by: .milliseconds(5_000))
            let releases = tracker.complete(.call("c1"))
            #expect(releases.map(\.item.name) == ["in2", "in3"], "at most one sendNow, after the expired one before it")
            #expect(releases.map(\.decision) == [.expired, .sendNow])
            #expect(tracker.counts.waitingEvents == 1)
        case .retryOfEnded:
            #expect(tracker.admit(entry("in", .incoming, "c1", 1_030_000)).decision == .sendNow)
            #expect(!tracker.hasEnded(.call("c1")))
            #expect(tracker.admit(entry("hup", .hangup, "c1", 0)).decision == .queued, "the one in flight stays")
            #expect(tracker.hasEnded(.call("c1")))
            let event = Fixtures.event()
            let record = KafkaMessage(topic: "calls", partition: 0, offset: 0, key: nil, value: [],
                                       timestampMilliseconds: event.createdAtMilliseconds)
            let timeout = APNsResult(disposition: .retryLater, status: nil, reason: "Timeout")
            let decision = OutcomeRouter().route(
                record: record, event: event, answer: timeout, topic: "t",
                now: event.createdAtMilliseconds + 1_000, callEnded: tracker.hasEnded(.call("c1")))
            #expect(decision.outcome == .cancelled && decision.reason == CancelReason.retryAfterStop)
        case .endedElsewhere:
            tracker.markEnded(.call("c1"))
            #expect(tracker.counts.activeCalls == 0 && tracker.hasEnded(.call("c1")))
            #expect(tracker.admit(entry("in", .incoming, "c1", 1_030_000)).decision == .cancelled)
            #expect(tracker.admit(entry("other", .incoming, "c2", 1_030_000)).decision == .sendNow)
        }
    }

    @Test func theDocumentHasExactlyTheseRows() throws {
        #expect(try CallHandlingDoc.keys(section: Self.section) == Row.allCases.map(\.rawValue))
    }
}
