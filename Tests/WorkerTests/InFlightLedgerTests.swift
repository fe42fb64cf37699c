import Foundation
import Synchronization
import Testing
@testable import Worker

/// Tickets in start order with their start times and live count; ended items are freed by the thread that calls
/// `releaseKept`, not the ones that ended them.
@Suite struct InFlightLedgerTests {
    /// The threads `Tracked` objects were freed on.
    final class FreeLog: Sendable {
        let threads = Mutex<[UInt]>([])
        var all: [UInt] { threads.withLock { $0 } }
    }

    /// Records the thread its deinit ran on.
    final class Tracked: InFlightLedgerItem {
        let log: FreeLog
        let ticket: UInt64
        private let next = Atomic<Unmanaged<Tracked>?>(nil)
        private let ended = Atomic<Bool>(false)
        init(_ log: FreeLog, ticket: UInt64 = 0) {
            self.log = log
            self.ticket = ticket
        }
        var ledgerNext: Unmanaged<Tracked>? { next.load(ordering: .relaxed) }
        func setLedgerNext(_ next: Unmanaged<Tracked>?) { self.next.store(next, ordering: .relaxed) }
        func markLedgerEnded() -> Bool { !ended.exchange(true, ordering: .relaxed) }
        deinit {
            let thread = UInt(pthread_self())
            log.threads.withLock { $0.append(thread) }
        }
    }

    @Test func ticketsCountLiveEventsAndTheOldestStart() {
        let log = FreeLog()
        let ledger = InFlightLedger<Tracked>()
        let (first, live) = ledger.begin(count: 3, at: 100)
        #expect(live == 3)
        #expect(ledger.begin(count: 1, at: 200) == (first + 3, 4))
        let items = (0..<4).map { Tracked(log, ticket: first + UInt64($0)) }
        #expect(ledger.end(items[1]).map { [$0.live] } == [3])
        #expect(ledger.end(items[1]) == nil, "an event ends once")
        #expect(ledger.oldestStart == 100)
        #expect(ledger.end(items[0])?.first == false, "the second kept since the last turn")
        ledger.end(items[2])
        #expect(ledger.oldestStart == 100, "the oldest start moves at the home thread's turn")
        var passed: [UInt64] = []
        ledger.releaseKept { passed.append($0.ticket) }
        #expect(passed == [first + 2, first, first + 1], "each kept item passed once, newest first")
        #expect(ledger.oldestStart == 200)
        #expect(ledger.end(items[3]).map { [$0.live] } == [0])
        #expect(ledger.oldestStart == nil, "nothing in flight: no oldest, turn or not")
        #expect(ledger.liveCount == 0)
        ledger.releaseKept()
        #expect(ledger.begin(count: 1, at: 300).live == 1)
        #expect(ledger.oldestStart == 300, "a batch begun on an empty ledger is the oldest at once")
    }

    /// An event dead-lettered before it has an item: its ticket leaves the start times at once, the live count when
    /// it ends.
    @Test func aForgottenTicketHoldsNoOldestStartButCountsUntilItEnds() {
        let ledger = InFlightLedger<Tracked>()
        let first = ledger.begin(count: 2, at: 100).first
        ledger.forget(first)
        #expect(ledger.liveCount == 2)
        let second = Tracked(FreeLog(), ticket: first + 1)
        ledger.end(second)
        ledger.releaseKept()
        #expect(ledger.liveCount == 1)
        #expect(ledger.oldestStart == nil)
        #expect(ledger.endUntracked() == 0)
    }

    @Test func objectsEndedOnOtherThreadsAreFreedOnceByTheReleasingThread() {
        let freedOn = FreeLog()
        let ledger = InFlightLedger<Tracked>()
        let threads = 4, perThread = 5_000
        let first = ledger.begin(count: threads * perThread, at: 0).first
        let ended = DispatchGroup()
        for thread in 0..<threads {
            ended.enter()
            Thread {
                for index in 0..<perThread {
                    ledger.end(Tracked(freedOn, ticket: first + UInt64(thread * perThread + index)))
                }
                ended.leave()
            }.start()
        }
        ended.wait()
        #expect(freedOn.all.isEmpty, "nothing is freed before releaseKept")
        #expect(ledger.liveCount == 0)
        ledger.releaseKept()
        let home = UInt(pthread_self())
        #expect(freedOn.all.count == threads * perThread)
        #expect(freedOn.all.allSatisfy { $0 == home })
        ledger.releaseKept()
        #expect(freedOn.all.count == threads * perThread)
    }

    @Test func anObjectStillReferencedElsewhereOutlivesTheRelease() {
        let freedOn = FreeLog()
        let ledger = InFlightLedger<Tracked>()
        var held: Tracked? = Tracked(freedOn, ticket: ledger.begin(count: 1, at: 0).first)
        ledger.end(held!)
        ledger.releaseKept()
        #expect(freedOn.all.isEmpty)
        held = nil
        #expect(freedOn.all.count == 1)
    }

    @Test func closeFreesWhatIsKeptAndKeepsNothingAfterwards() {
        let freedOn = FreeLog()
        let ledger = InFlightLedger<Tracked>()
        let first = ledger.begin(count: 2, at: 0).first
        ledger.end(Tracked(freedOn, ticket: first))
        ledger.close()
        #expect(freedOn.all.count == 1)
        ledger.end(Tracked(freedOn, ticket: first + 1))
        #expect(freedOn.all.count == 2, "ended after close: freed at once")
        #expect(ledger.liveCount == 0)
    }
}
