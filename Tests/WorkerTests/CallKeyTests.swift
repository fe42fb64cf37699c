import Testing
@testable import Worker

@Suite struct CallKeyTests {
    @Test func sameAppAndCallIsOneKey() {
        let key = CallKey(topic: "com.example.app", callID: "c-1")
        #expect(key == CallKey(topic: "com.example.app", callID: "c-1"))
        #expect(Set([key, CallKey(topic: "com.example.app", callID: "c-1")]).count == 1)
    }

    /// Another app's call of the same id, and a split of the same characters elsewhere, are other calls: their
    /// hashes differ too, so the ended-call memory (which keeps only the hash) tells them apart.
    @Test func otherAppOrOtherSplitIsAnotherCall() {
        let key = CallKey(topic: "com.example.app", callID: "c-1")
        let others = [
            CallKey(topic: "com.example.other", callID: "c-1"),
            CallKey(topic: "com.example.appc", callID: "-1"),
            CallKey(topic: "com.example.ap", callID: "pc-1"),
        ]
        for other in others {
            #expect(key != other)
            #expect(key.hash != other.hash)
        }
    }

    @Test func oneAppsHangUpDoesNotEndAnotherAppsCall() {
        let tracker = CallTracker<TrackedEvent>()
        tracker.markEnded(CallKey(topic: "com.example.other", callID: "c-1"))
        #expect(!tracker.hasEnded(CallKey(topic: "com.example.app", callID: "c-1")))
        #expect(tracker.hasEnded(CallKey(topic: "com.example.other", callID: "c-1")))
    }
}
