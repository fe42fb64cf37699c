@preconcurrency import Glibc
import EmbeddedPipeline
import Foundation

// The in-process areas (pipeline, memory) stand for a `callpush demo` process: the malloc arena limit callpush sets
// for it (2; `run` 8), unless the environment chose one. The kafka and latency areas run in a process of their own
// started with MALLOC_ARENA_MAX=8, `run`'s limit (OwnProcessArea).
MallocArenaLimit.apply(environment: ProcessInfo.processInfo.environment, command: "demo")

// callpush-bench [area…] [--seconds N] [--repeat N] [--quick] [--soak-minutes N]: see BenchOptions.usage.
setvbuf(stdout, nil, _IOLBF, 0)
let options: BenchOptions
do {
    options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("callpush-bench: \(error)\n".utf8))
    exit(64)
}
if options.help {
    print(BenchOptions.usage)
    exit(0)
}
#if DEBUG
if !options.quick {
    FileHandle.standardError.write(Data(
        "callpush-bench: this is a debug build; benchmarks need a release build (swift build -c release --product callpush-bench, or make bench). Only --quick runs in debug.\n".utf8))
    exit(2)
}
FileHandle.standardError.write(Data("callpush-bench: WARNING: debug build, numbers are meaningless (smoke run)\n".utf8))
#endif

// An area's own process (see OwnProcessArea) prints only what the area measures, into its parent's output.
let quiet = options.resultsPath != nil
if !quiet {
    print("callpush-bench: \(options.areas.map(\.rawValue).joined(separator: " ")), \(options.seconds) s per measurement, "
        + "\(options.repetitions) repetition(s)\(options.quick ? ", quick" : ""), \(ProcessInfo.processInfo.activeProcessorCount) cores, "
        + "load \(LoadAverage.text)")
}
var result = AreaResult()
let started = ContinuousClock.now
for area in options.areas {
    if !quiet { print("\n[\(area.rawValue)] \(area.summary)") }
    if area.runsInOwnProcess, !quiet {
        result.merge(OwnProcessArea.run(area, options))
        continue
    }
    switch area {
    case .http2: result.merge(await HTTP2Area.run(options))
    case .apns: result.merge(await APNsArea.run(options))
    case .mock: result.merge(await MockArea.run(options))
    case .peers: result.merge(await PeersArea.run(options))
    case .kafka: result.merge(await KafkaArea.run(options))
    case .json: result.merge(await JSONArea.run(options))
    case .pipeline: result.merge(await PipelineArea.run(options, references: result))
    case .worker: result.merge(await WorkerArea.run(options))
    case .latency: result.merge(await LatencyArea.run(options))
    case .groups: result.merge(await GroupsArea.run(options))
    case .memory: result.merge(await MemoryArea.run(options))
    }
}
if let path = options.resultsPath { OwnProcessArea.write(result, to: path) }
if options.areas.count > 1, !quiet {
    print(BenchSummary(result: result).table)
}
if !quiet { print("\ndone in \((ContinuousClock.now - started).components.seconds) s, load \(LoadAverage.text)") }
