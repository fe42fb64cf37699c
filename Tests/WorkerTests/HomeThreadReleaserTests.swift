import Foundation
import Synchronization
import Testing
@testable import Worker

/// Kept objects are freed by the thread that calls `releaseAll`, not the one that kept them.
@Suite struct HomeThreadReleaserTests {
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

    @Test func objectsKeptOnAnotherThreadAreFreedByTheReleasingThread() {
        let freedOn = FreeLog()
        let releaser = HomeThreadReleaser<Tracked>()
        let kept = DispatchSemaphore(value: 0)
        let other = Thread {
            for _ in 0..<100 { releaser.keep(Tracked(freedOn)) }
            kept.signal()
        }
        other.start()
        kept.wait()
        #expect(freedOn.all.isEmpty, "nothing is freed before releaseAll")
        releaser.releaseAll()
        let home = UInt(pthread_self())
        #expect(freedOn.all == Array(repeating: home, count: 100))
        releaser.releaseAll()
        #expect(freedOn.all.count == 100)
    }

    @Test func anObjectStillReferencedElsewhereOutlivesTheRelease() {
        let freedOn = FreeLog()
        let releaser = HomeThreadReleaser<Tracked>()
        var held: Tracked? = Tracked(freedOn)
        releaser.keep(held!)
        releaser.releaseAll()
        #expect(freedOn.all.isEmpty)
        held = nil
        #expect(freedOn.all.count == 1)
    }

    @Test func closeFreesWhatIsKeptAndKeepsNothingAfterwards() {
        let freedOn = FreeLog()
        let releaser = HomeThreadReleaser<Tracked>()
        releaser.keep(Tracked(freedOn))
        releaser.close()
        #expect(freedOn.all.count == 1)
        releaser.keep(Tracked(freedOn))
        #expect(freedOn.all.count == 2, "kept after close: freed at once")
    }
}
