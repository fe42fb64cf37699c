import Synchronization

/// The process metrics Prometheus client libraries export (`process_cpu_seconds_total`,
/// `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_start_time_seconds`, `process_open_fds`,
/// `process_max_fds`) and the CPU time of each group of threads (`callpush_thread_cpu_seconds_total{thread}`, groups
/// by ``ThreadName/group(_:)``: which part of a worker saturates a core), read from `/proc/self` when `/metrics` is
/// rendered.
///
/// A reading walks every thread's `/proc` entry (about 20 file reads): readings closer together than
/// ``minimumInterval`` reuse the last one, so a scraper polling fast costs the process little.
package final class ProcessMetrics: Sendable {
    /// Readings closer together than this reuse the last one. Default: 1 second.
    package static let minimumInterval: Duration = .seconds(1)
    static let threadFamily = "callpush_thread_cpu_seconds_total"

    private struct State {
        var lastReading: ContinuousClock.Instant?
        var processCPU = 0.0
        /// CPU seconds per thread id at the last reading: counters grow by the difference.
        var threadCPU: [Int: Double] = [:]
    }

    private let state = Mutex(State())
    private let cpu: Counter
    private let resident: Gauge
    private let virtual: Gauge
    private let start: Gauge
    private let openDescriptors: Gauge
    private let maximumDescriptors: Gauge

    private init(registry: MetricsRegistry) {
        cpu = registry.counter("process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.")
        resident = registry.gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.")
        virtual = registry.gauge("process_virtual_memory_bytes", help: "Virtual memory size in bytes.")
        start = registry.gauge("process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.")
        openDescriptors = registry.gauge("process_open_fds", help: "Number of open file descriptors.")
        maximumDescriptors = registry.gauge("process_max_fds", help: "Maximum number of open file descriptors.")
    }

    /// Registers the metrics in `registry` and refreshes them before its expositions. The registry keeps them (and
    /// they do not keep the registry).
    @discardableResult
    package static func register(in registry: MetricsRegistry) -> ProcessMetrics {
        let metrics = ProcessMetrics(registry: registry)
        metrics.refresh(in: registry)
        registry.addCollector { [weak registry] in
            if let registry { metrics.refresh(in: registry) }
        }
        return metrics
    }

    /// Reads `/proc/self` unless the last reading is less than ``minimumInterval`` old.
    func refresh(in registry: MetricsRegistry) {
        let now = ContinuousClock.now
        state.withLock { state in
            if let last = state.lastReading, now - last < Self.minimumInterval { return }
            state.lastReading = now
            guard let reading = ProcessStatistics.read() else { return }
            cpu.increment(by: max(0, reading.cpuSeconds - state.processCPU))
            state.processCPU = max(state.processCPU, reading.cpuSeconds)
            resident.set(reading.residentBytes)
            virtual.set(reading.virtualBytes)
            if let started = reading.startTimeSeconds { start.set(started) }
            openDescriptors.set(reading.openFileDescriptors)
            if let maximum = reading.maximumFileDescriptors { maximumDescriptors.set(maximum) }
            var byGroup: [String: Double] = [:]
            var threadCPU: [Int: Double] = [:]
            for thread in reading.threads {
                // A thread that exited drops out; its CPU stays counted. A new one counts from zero.
                byGroup[ThreadName.group(thread.name), default: 0] += max(0, thread.cpuSeconds - (state.threadCPU[thread.id] ?? 0))
                threadCPU[thread.id] = thread.cpuSeconds
            }
            state.threadCPU = threadCPU
            for (group, seconds) in byGroup {
                registry.counter(Self.threadFamily, help: "CPU time used by the process's threads, by group of thread name "
                    + "(kafka-consume, http2-loop, kafka-produce, librdkafka, dispatch, ...).", labels: ["thread": group])
                    .increment(by: seconds)
            }
        }
    }
}
