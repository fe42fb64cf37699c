import Foundation
import Synchronization
import Telemetry
import TestSupport
import Testing

/// `/proc` readings of this test process, and the process and per-thread series they feed.
@Suite struct ProcessMetricsTests {
    /// Starts a thread named `name` that spins for `seconds` of CPU time and then waits, alive, until the returned
    /// semaphore is signalled (a thread's CPU is only readable while it lives); returns once it has spun.
    private func startBurner(_ seconds: Double, name: String) -> DispatchSemaphore {
        let burned = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let thread = Thread {
            ThreadName.setCurrent(name)
            var sink = 0
            while Self.threadCPUSeconds() < seconds { sink &+= 1 }
            withExtendedLifetime(sink) {}
            burned.signal()
            release.wait()
        }
        thread.start()
        burned.wait()
        return release
    }

    /// The calling thread's own CPU time.
    private static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    @Test func aReadingOfThisProcessAddsUp() throws {
        let burner = startBurner(0.15, name: "reading-burner")
        defer { burner.signal() }
        let reading = try #require(ProcessStatistics.read())
        #expect(reading.cpuSeconds >= 0.15)
        #expect(reading.residentBytes > 1 << 20 && reading.virtualBytes >= reading.residentBytes)
        let now = Date().timeIntervalSince1970
        let started = try #require(reading.startTimeSeconds)
        #expect(started <= now + 1 && started > now - 86_400, "the test process started today: \(started) vs \(now)")
        #expect(reading.openFileDescriptors >= 3)
        #expect(reading.maximumFileDescriptors.map { $0 >= reading.openFileDescriptors } ?? true)
        // Every living thread, each with its own name and CPU time, none above the process's.
        let named = try #require(reading.threads.first { $0.name == "reading-burner" }, "\(reading.threads.map(\.name))")
        #expect(named.cpuSeconds >= 0.1)
        #expect(reading.threads.allSatisfy { $0.cpuSeconds <= reading.cpuSeconds + 0.02 })
        #expect(ProcessStatistics.read(process: "999999999") == nil, "no such process")
    }

    @Test func exposesProcessSeriesAndCPUByThreadGroup() async throws {
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        let before = registry.exposition()
        let burner = startBurner(0.2, name: "burner-7")
        defer { burner.signal() }
        // A second reading within the interval is the first one again; after it, a new one.
        #expect(ExpositionSeries.value("process_cpu_seconds_total", in: registry.exposition()) == ExpositionSeries.value("process_cpu_seconds_total", in: before))
        try await Task.sleep(for: ProcessMetrics.minimumInterval + .milliseconds(100))
        let after = registry.exposition()
        let burned = try #require(ExpositionSeries.value(#"callpush_thread_cpu_seconds_total{thread="burner"}"#, in: after),
                                  "the numbered thread name counts under its group:\n\(after)")
        #expect(burned >= 0.15)
        let total = try #require(ExpositionSeries.value("process_cpu_seconds_total", in: after))
        #expect(total >= burned)
        #expect((ExpositionSeries.value("process_resident_memory_bytes", in: after) ?? 0) > Double(1 << 20))
        #expect((ExpositionSeries.value("process_open_fds", in: after) ?? 0) >= 3)
        #expect((ExpositionSeries.value("process_start_time_seconds", in: after) ?? 0) > Date().timeIntervalSince1970 - 86_400)
        for family in ["process_cpu_seconds_total counter", "process_resident_memory_bytes gauge", "process_max_fds gauge",
                       "callpush_thread_cpu_seconds_total counter"] {
            #expect(after.contains("# TYPE \(family)\n"), "\(family)")
        }
        let check = try PromtoolCheck.run(after)
        #expect(check.status == 0, "promtool: \(check.output)")
    }
}
