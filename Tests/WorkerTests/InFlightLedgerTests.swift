import Foundation
import Synchronization
import Testing
@testable import Worker

/// Tickets in start order with their start times and live count; finished items are freed by the thread that calls
/// `releaseKept`, not the one that ended them.
@Suite struct InFlightLedgerTests {
    /// The threads `Tracked` objects were freed on.
    final class FreeLog: Sendable {
        let threads = Mutex<[UInt]>([])
        var all: [UInt] { threads.withLock { $0 } }
    }

    /// Records the thread its deinit ran on.
    final class Tracked: Sendable {
        let log: FreeLog
        init(_ log: FreeLog) { self.log = log }
        deinit {
            let thread = UInt(pthread_self())
            log.threads.withLock { $0.append(thread) }
        }
    }

    @Test func ticketsCountLiveEventsAndTheOldestStart() {
        let ledger = InFlightLedger<Tracked>()
        let (first, live) = ledger.begin(count: 3, at: 100)
        #expect(live == 3)
        #expect(ledger.begin(count: 1, at: 200) == (first + 3, 4))
        #expect(ledger.end(first + 1) == (100, 3))
        #expect(ledger.end(first + 1) == (nil, 3), "a ticket ends once")
        #expect(ledger.oldestStart == 100)
        _ = ledger.end(first)
        _ = ledger.end(first + 2)
        #expect(ledger.oldestStart == 200)
        #expect(ledger.end(first + 3) == (200, 0))
        #expect(ledger.oldestStart == nil)
        #expect(ledger.liveCount == 0)
    }

    @Test func objectsKeptOnAnotherThreadAreFreedByTheReleasingThread() {
        let freedOn = FreeLog()
        let ledger = InFlightLedger<Tracked>()
        let first = ledger.begin(count: 100, at: 0).first
        let kept = DispatchSemaphore(value: 0)
        let other = Thread {
            for index in 0..<100 { _ = ledger.end(first + UInt64(index), keeping: Tracked(freedOn)) }
            kept.signal()
        }
        other.start()
        kept.wait()
        #expect(freedOn.all.isEmpty, "nothing is freed before releaseKept")
        #expect(ledger.liveCount == 0)
        ledger.releaseKept()
        let home = UInt(pthread_self())
        #expect(freedOn.all == Array(repeating: home, count: 100))
        ledger.releaseKept()
        #expect(freedOn.all.count == 100)
    }

    @Test func anObjectStillReferencedElsewhereOutlivesTheRelease() {
        let freedOn = FreeLog()
        let ledger = InFlightLedger<Tracked>()
        var held: Tracked? = Tracked(freedOn)
        _ = ledger.end(ledger.begin(count: 1, at: 0).first, keeping: held!)
        ledger.releaseKept()
        #expect(freedOn.all.isEmpty)
        held = nil
        #expect(freedOn.all.count == 1)
    }

    @Test func closeFreesWhatIsKeptAndKeepsNothingAfterwards() {
        let freedOn = FreeLog()
        let ledger = InFlightLedger<Tracked>()
        let first = ledger.begin(count: 2, at: 0).first
        _ = ledger.end(first, keeping: Tracked(freedOn))
        ledger.close()
        #expect(freedOn.all.count == 1)
        _ = ledger.end(first + 1, keeping: Tracked(freedOn))
        #expect(freedOn.all.count == 2, "kept after close: freed at once")
    }
}
