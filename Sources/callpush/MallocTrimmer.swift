import CGlibcMalloc
import Foundation
import Telemetry

/// Gives the free memory glibc's malloc keeps back to the kernel every ``interval`` while `callpush run` runs
/// (`malloc_trim(0)`: the top of each arena, and every whole free page inside them, `madvise(MADV_DONTNEED)`).
///
/// Why: in the worker many objects are allocated on one thread and freed on another (librdkafka's records, requests and
/// answers on the event loops, receipts on the producer's thread), and glibc keeps what is freed in the arena for later
/// allocations; a burst, a GOAWAY's reconnect or a retry tier's batch leaves free pages that stay resident although
/// nothing uses them. Trimming them now and then keeps RSS near what is in use.
///
/// Cost: the trim walks every free chunk of every arena under that arena's lock, so a thread allocating in the arena
/// meanwhile waits; it runs off the hot path on a utility-priority task. Each trim is counted in
/// `callpush_malloc_trims_total`, its time in `callpush_malloc_trim_seconds_total` and the resident memory it gave
/// back in `callpush_malloc_trim_released_bytes_total`; a debug log line has the same per trim.
final class MallocTrimmer: Sendable {
    /// Time between trims when `--malloc-trim-interval` is not given. Default: 30 seconds (a trim takes milliseconds;
    /// its measured cost and gain are in docs/performance.md, "Memory").
    static let defaultInterval: Duration = .seconds(30)

    private let task: Task<Void, Never>

    /// Starts trimming every `interval` (the first one `interval` from now) until ``stop()``.
    init(interval: Duration, registry: MetricsRegistry, logger: Logger) {
        let trims = registry.counter("callpush_malloc_trims_total", help: "Times malloc's free memory was given back to the kernel (malloc_trim).")
        let seconds = registry.counter("callpush_malloc_trim_seconds_total", help: "Time spent in malloc_trim.")
        let released = registry.counter(
            "callpush_malloc_trim_released_bytes_total", help: "Resident memory malloc_trim gave back (RSS before minus after each trim).")
        task = Task.detached(priority: .utility) {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                let before = Self.residentBytes()
                let start = ContinuousClock.now
                malloc_trim(0)
                let took = ContinuousClock.now - start
                let after = Self.residentBytes()
                trims.increment()
                seconds.increment(by: took.inSeconds)
                released.increment(by: max(0, before - after))
                logger.debug("malloc trimmed", metadata: [
                    "rss.before": String(before), "rss.after": String(after), "duration.ms": String(format: "%.2f", took.inSeconds * 1000),
                ])
            }
        }
    }

    /// Stops trimming (a trim under way finishes).
    func stop() { task.cancel() }

    /// This process's resident memory in bytes, or 0 if it cannot be read.
    private static func residentBytes() -> Int { ProcessStatistics.read(threads: false)?.residentBytes ?? 0 }
}
