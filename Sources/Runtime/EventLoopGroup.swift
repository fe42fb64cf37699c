@preconcurrency import Glibc
import Synchronization

/// A fixed set of event loops, one thread each. Connections are spread over the loops round-robin.
///
/// Create one per process (or per component) and call `shutdown()` once at the end.
package final class EventLoopGroup: Sendable {
    /// The loops, in index order.
    package let loops: [EventLoop]
    private let nextIndex = Atomic<Int>(0)
    private let isShutdown = Atomic<Bool>(false)

    /// The time slice a loop's thread asks the kernel for unless told otherwise: 100 µs, the shortest Linux grants.
    package static let defaultTimeSlice: Duration = .microseconds(100)

    /// Starts `numberOfThreads` loops.
    /// - Parameters:
    ///   - numberOfThreads: loops (threads) to start; at least 1. Default: 1.
    ///   - timeSlice: the CPU time slice each loop's thread asks the kernel for (`sched_setattr`; Linux 6.12+,
    ///     whose EEVDF scheduler runs a woken thread with a shorter slice sooner, at the same share of the CPU;
    ///     older kernels ignore it, and a refusal leaves the kernel's default). A loop wakes, works for tens of
    ///     microseconds and waits again; with the default slice (0.7–0.75 ms × (1 + log2 of the CPU count)) it
    ///     waited behind the consumer thread and librdkafka's threads that were mid-slice. nil keeps the kernel's
    ///     default.
    ///     Default: ``defaultTimeSlice``.
    /// - Throws: `SocketError` (`eventLoopFailed`) if epoll or eventfd cannot be created.
    ///
    /// - Important: ignores `SIGPIPE` process-wide (OpenSSL writes to sockets with `write(2)`, and a peer that
    ///   closed would otherwise kill the process).
    package init(numberOfThreads: Int = 1, timeSlice: Duration? = EventLoopGroup.defaultTimeSlice) throws(SocketError) {
        signal(SIGPIPE, SIG_IGN)
        var loops: [EventLoop] = []
        for index in 0..<max(1, numberOfThreads) {
            loops.append(try EventLoop(index: index, timeSlice: timeSlice))
        }
        self.loops = loops
        for loop in loops { loop.start() }
    }

    /// The next loop in round-robin order.
    package func next() -> EventLoop {
        let index = nextIndex.add(1, ordering: .relaxed).oldValue
        return loops[index % loops.count]
    }

    /// Stops every loop: each closes its connections (answering pending requests with errors) and its thread ends.
    /// Blocks until the threads have exited. Must not be called from one of the group's own loops. Idempotent.
    package func shutdown() {
        if isShutdown.exchange(true, ordering: .acquiringAndReleasing) { return }
        for loop in loops { loop.shutdown() }
        for loop in loops { loop.join() }
    }

    deinit {
        shutdown()
    }
}
