import Foundation
@testable import Runtime
@testable import HTTP2
import TestSupport
import Testing

/// Event-loop threads ask the kernel for a short time slice (``EventLoopGroup/init(numberOfThreads:timeSlice:)``). The
/// kernel shows a thread's slice as `se.slice` in `/proc/thread-self/sched` (Linux 6.12+ with scheduler debug
/// information, as on the CI machine); where it does not, the test is skipped.
@Suite struct EventLoopTimeSliceTests {
    static let kernelShowsSlices = currentThreadSlice() != nil

    /// `se.slice` of the calling thread, in nanoseconds.
    static func currentThreadSlice() -> Int? {
        SchedulerSlice.value(inSchedFile: "/proc/thread-self/sched").flatMap { Int($0) }
    }

    /// `se.slice` of `loop`'s thread, read on it.
    static func slice(of loop: EventLoop) async -> Int? {
        await withCheckedContinuation { continuation in
            loop.execute { continuation.resume(returning: currentThreadSlice()) }
        }
    }

    @Test(.enabled(if: kernelShowsSlices)) func loopThreadsRunInTheSliceTheyAskFor() async throws {
        let asked = try EventLoopGroup(numberOfThreads: 2, timeSlice: .microseconds(250))
        defer { asked.shutdown() }
        #expect(await Self.slice(of: asked.next()) == 250_000)
        #expect(await Self.slice(of: asked.next()) == 250_000)

        let byDefault = try EventLoopGroup(numberOfThreads: 1)
        defer { byDefault.shutdown() }
        #expect(await Self.slice(of: byDefault.next()) == 100_000)

        // nil leaves the kernel's default: the slice of a thread that never asked (this test's).
        let kernelDefault = try #require(Self.currentThreadSlice())
        #expect(kernelDefault != 100_000 && kernelDefault != 250_000)
        let untouched = try EventLoopGroup(numberOfThreads: 1, timeSlice: nil)
        defer { untouched.shutdown() }
        #expect(await Self.slice(of: untouched.next()) == kernelDefault)
    }
}
