import CGlibcMalloc
import EmbeddedPipeline
import Foundation
import Glibc
import Kafka
import Worker

/// Area `memory`: the resident memory of `callpush run` in a process of its own (as in the `worker` area, against
/// `callpush kafka-mock` and `callpush mock-apns` processes), read from `/proc/<pid>/status`:
/// - **idle**: `VmRSS` once it has joined the group and sat idle a few seconds, against 28 MB;
/// - **peak**: `VmHWM` while 10 000 events are in flight at once (the mock answers after seconds, the in-flight
///   window is 10 000 and a backlog waits behind it in Kafka), against 150 MB; the worker's own
///   `callpush_inflight_events` gauge shows that 10 000 really were in flight;
/// - **flatness**: `VmRSS` every second of a steady 1000 events/s run with APNs faults (2 % 503, 1 % 429, 0.5 %
///   500, GOAWAY every 3000 streams, rare drops and stalls, dead tokens) and receipts: the largest sample against
///   the first one after the warm-up, against 1.10 (± 10 %); `--soak-minutes N` makes the run N minutes long;
/// - **pipeline runs**: this process's `VmRSS` before each of several in-process ``EmbeddedPipeline`` runs (a fresh
///   cluster, worker, client and mock each, shut down and released after), once as found and once after
///   `malloc_trim(0)`; the largest trimmed reading from the third run on against the one before the second (the
///   first run loads code and warms caches once), against 1.10; with malloc's own count of bytes in use. The
///   trimmed reading is what the runs left behind: `EmbeddedPipeline.shutdown()` trims what is free by then, but the
///   pipeline's own objects (its workers, client, mock and cluster) are freed when the last reference to it goes,
///   after that, and where those free pages sit in glibc's arenas moved the untrimmed reading by several MB from run
///   to run (`callpush run` trims every 30 s for the same reason). The runs are `demo`'s pipeline
///   (``PipelineArea/configuration``: the mock keeps counts, not the last 10 000 requests, which held about 10 MB).
enum MemoryArea {
    static let megabyte = 1024
    static let idleBoundKilobytes = 28 * megabyte
    static let peakBoundKilobytes = 150 * megabyte
    static let flatnessBound = 1.10
    static let peakInFlight = 10_000
    static let partitions = 8
    static let steadyRate = 1000.0

    static func run(_ options: BenchOptions) async -> AreaResult {
        var result = AreaResult()
        let bed: MockAPNsBed
        do { bed = try MockAPNsBed.make() } catch {
            print("  FAILED memory area: \(error)")
            return result
        }
        defer { bed.remove() }
        do { try await idle(options, bed: bed, into: &result) } catch { print("  FAILED idle: \(error)") }
        do { try await peak(options, bed: bed, into: &result) } catch { print("  FAILED peak: \(error)") }
        do { try await flatness(options, bed: bed, into: &result) } catch { print("  FAILED flatness: \(error)") }
        do { try await pipelineRuns(options, into: &result) } catch { print("  FAILED pipeline runs: \(error)") }
        return result
    }

    // MARK: - Idle

    private static func idle(_ options: BenchOptions, bed: MockAPNsBed, into result: inout AreaResult) async throws {
        let setup = try await WorkerSetup.start(bed: bed, mock: [], worker: [])
        defer { setup.stop() }
        try await Task.sleep(for: .seconds(options.quick ? 2 : 5))
        guard let memory = ProcessMemory.read(pid: setup.worker.process.pid) else {
            throw BenchFailure("cannot read /proc/\(setup.worker.process.pid)/status")
        }
        let maps = (try? String(contentsOfFile: "/proc/\(setup.worker.process.pid)/maps", encoding: .utf8)) ?? ""
        let runtime = maps.contains("libswiftCore.so") ? "Swift runtime and Foundation as shared libraries (not as in the "
            + "image, which links them statically: make bench does too)" : "Swift runtime linked statically, as in the image"
        print("  idle callpush run, joined and idle: \(memory.summary); \(runtime)")
        result.report(BenchRatio(area: .memory, name: "idle run RSS vs 28 MB",
                                 value: Double(memory.residentKilobytes), reference: Double(idleBoundKilobytes),
                                 target: .atMost(1)))
        result.notes.append("memory: idle callpush run \(memory.summary); \(runtime)")
    }

    // MARK: - Peak at 10 000 in flight

    private static func peak(_ options: BenchOptions, bed: MockAPNsBed, into result: inout AreaResult) async throws {
        // Ten connections of 1000 streams carry all 10 000 at once; each answer comes `latency` after its request, so
        // the window stays full while the backlog behind it (in Kafka, and in librdkafka's pre-fetch) drains.
        let latency = options.quick ? 1_000 : 3_000
        let setup = try await WorkerSetup.start(bed: bed, mock: ["--latency-ms", String(latency)], worker: [
            "--kafka-receipts", "--apns-connections", "10", "--apns-request-timeout", "60",
            "--worker-max-in-flight", String(peakInFlight), "--worker-max-in-flight-per-partition", String(peakInFlight),
        ])
        defer { setup.stop() }
        let events = options.quick ? 12_000 : 40_000
        let (generator, producer) = try setup.generator(mix: PipelineArea.mix)
        let produced = await generator.run(rate: 10_000_000, count: events, duration: .seconds(60))
        await producer.close()
        var mostInFlight = 0.0
        let deadline = ContinuousClock.now + .seconds(300)
        while (setup.worker.finalOutcomes ?? 0) < produced {
            guard ContinuousClock.now < deadline, setup.worker.process.isRunning else {
                throw BenchFailure("only \(setup.worker.finalOutcomes ?? 0) of \(produced) events reached a final outcome")
            }
            mostInFlight = max(mostInFlight, setup.worker.metric("callpush_inflight_events") ?? 0)
            try? await Task.sleep(for: .milliseconds(100))
        }
        guard let memory = ProcessMemory.read(pid: setup.worker.process.pid) else {
            throw BenchFailure("cannot read /proc/\(setup.worker.process.pid)/status")
        }
        let verified = mostInFlight >= Double(peakInFlight)
        print("  \(produced) events, at most \(Int(mostInFlight)) in flight (callpush_inflight_events), mock latency "
            + "\(latency) ms: \(memory.summary)")
        if !verified { print("  NOTE: fewer than \(peakInFlight) were in flight at once: the peak below is not the target's") }
        result.report(BenchRatio(area: .memory, name: verified ? "peak RSS at 10k in flight vs 150 MB"
                                     : "peak RSS at \(Int(mostInFlight)) (not 10k) in flight vs 150 MB",
                                 value: Double(memory.peakKilobytes), reference: Double(peakBoundKilobytes),
                                 target: .atMost(1)))
        result.notes.append("memory: at \(Int(mostInFlight)) events in flight callpush run peaked at "
            + BenchFormat.megabytes(memory.peakKilobytes))
    }

    // MARK: - Flat over a steady run with faults

    private static func flatness(_ options: BenchOptions, bed: MockAPNsBed, into result: inout AreaResult) async throws {
        let warmUp: Duration = options.soakMinutes != nil ? .seconds(60) : .seconds(options.quick ? 3 : 20)
        let measured: Duration = options.soakMinutes.map { .seconds(Int($0 * 60)) } ?? .seconds(options.quick ? 10 : 90)
        let setup = try await WorkerSetup.start(bed: bed, mock: [
            "--rate-503", "0.02", "--rate-429", "0.01", "--rate-500", "0.005", "--goaway-after", "3000",
            "--drop-rate", "0.0002", "--stall-rate", "0.0002", "--latency-ms", "2", "--jitter-ms", "3",
            "--unregistered-tokens", CallTrafficGenerator.deadTokens.sorted().joined(separator: ","),
        ], worker: ["--kafka-receipts"])
        defer { setup.stop() }
        let (generator, producer) = try setup.generator(mix: CallTrafficMix())
        let traffic = Task {
            _ = await generator.run(rate: steadyRate, count: nil, duration: warmUp + measured)
            await producer.close()
        }
        defer { traffic.cancel() }
        let pid = setup.worker.process.pid
        try await Task.sleep(for: warmUp)
        var samples: [ProcessMemory] = []
        let start = ContinuousClock.now
        while ContinuousClock.now - start < measured {
            guard setup.worker.process.isRunning else { throw BenchFailure("callpush run exited during the steady run") }
            if let memory = ProcessMemory.read(pid: pid) { samples.append(memory) }
            try? await Task.sleep(for: .seconds(1))
        }
        let outcomes = setup.worker.finalOutcomes ?? 0
        guard let first = samples.first, let largest = samples.map(\.residentKilobytes).max(),
              let smallest = samples.map(\.residentKilobytes).min() else { throw BenchFailure("no RSS samples") }
        let step = max(1, samples.count / 10)
        let series = stride(from: 0, to: samples.count, by: step).map { BenchFormat.megabytes(samples[$0].residentKilobytes) }
        print("  \(Int(steadyRate)) events/s with faults for \(measured.components.seconds) s after "
            + "\(warmUp.components.seconds) s of warm-up (\(outcomes) final outcomes): RSS every \(step) s "
            + series.joined(separator: " → ") + "; first \(BenchFormat.megabytes(first.residentKilobytes)), "
            + "min \(BenchFormat.megabytes(smallest)), max \(BenchFormat.megabytes(largest)); last: \(samples[samples.count - 1].summary)")
        let minutes = String(format: "%.0f", measured.inSeconds / 60)
        result.report(BenchRatio(area: .memory, name: "run RSS max vs first, \(minutes) min at 1k/s with faults",
                                 value: Double(largest), reference: Double(first.residentKilobytes),
                                 target: .atMost(flatnessBound)))
        result.notes.append("memory: steady run RSS \(BenchFormat.megabytes(first.residentKilobytes)) after warm-up, "
            + "\(BenchFormat.megabytes(smallest))–\(BenchFormat.megabytes(largest)) over \(measured.components.seconds) s")
    }

    // MARK: - Repeated in-process pipeline runs

    private static func pipelineRuns(_ options: BenchOptions, into result: inout AreaResult) async throws {
        let count = options.quick ? 3 : max(4, options.repetitions + 1)
        var before: [Reading] = []
        for _ in 0..<count {
            before.append(Reading())
            let run = try await PipelineRun.measure(events: PipelineArea.events(options),
                                                    configuration: PipelineArea.configuration, mix: PipelineArea.mix)
            print("  pipeline run: \(run.events) events in \(BenchFormat.seconds(run.seconds)), peak RSS "
                + "\(run.peakKilobytes.map(BenchFormat.megabytes) ?? "-")")
        }
        let after = Reading()
        print("  this process before each run → after the last:\n"
            + (before + [after]).map { "    \($0.summary)" }.joined(separator: "\n"))
        let reference = before[1].trimmed.residentKilobytes
        let largest = (before.dropFirst(2) + [after]).map(\.trimmed.residentKilobytes).max() ?? reference
        result.report(BenchRatio(area: .memory, name: "RSS across \(count) in-process pipeline runs (trimmed), max vs 2nd",
                                 value: Double(largest), reference: Double(reference), target: .atMost(flatnessBound)))
        func series(_ rss: (Reading) -> ProcessMemory) -> String {
            (before + [after]).map { BenchFormat.megabytes(rss($0).residentKilobytes) }.joined(separator: " → ")
        }
        result.notes.append("memory: in-process pipeline runs, RSS before each run and after the last "
            + "\(series(\.trimmed)) after malloc_trim, \(series(\.found)) as found")
    }

    /// This process's memory as found, malloc's own count of what it holds, and the memory once malloc gave its free
    /// pages back.
    private struct Reading {
        let found: ProcessMemory
        let malloc: mallinfo2
        let trimmed: ProcessMemory

        init() {
            found = Self.memory()
            malloc = mallinfo2()
            malloc_trim(0)
            trimmed = Self.memory()
        }

        private static func memory() -> ProcessMemory {
            ProcessMemory.read() ?? ProcessMemory(residentKilobytes: 0, peakKilobytes: 0, anonymousKilobytes: 0,
                                                  fileKilobytes: 0, threads: 0)
        }

        var summary: String {
            // uordblks: allocated from the arenas; hblkhd: allocated with mmap; fordblks: free but kept in the arenas.
            "\(found.summary); malloc: in use \(BenchFormat.megabytes(Int(malloc.uordblks + malloc.hblkhd) / 1024)), "
                + "free in its arenas \(BenchFormat.megabytes(Int(malloc.fordblks) / 1024)); after malloc_trim RSS "
                + BenchFormat.megabytes(trimmed.residentKilobytes)
        }
    }
}
