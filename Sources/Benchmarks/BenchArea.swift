/// The parts of the benchmark suite, in the order a default run goes through them.
enum BenchArea: String, CaseIterable, Sendable {
    /// Our HTTP/2 client and server against h2load and nghttpd.
    case http2
    /// APNsClient against h2load, both posting to the mock APNs server.
    case apns
    /// `callpush mock-apns` against nghttpd, both under h2load with JWT-authenticated APNs requests.
    case mock
    /// APNsClient against aioapns, and against the streams ÷ RTT law, on `callpush mock-apns`.
    case peers
    /// In-process produce/consume rates against kcat on the embedded mock cluster.
    case kafka
    /// The hand-written event decoder and payload encoder against Foundation.
    case json
    /// End-to-end events/s through the embedded pipeline, against the Kafka and APNs rates.
    case pipeline
    /// `callpush run` in its own process: CPU per event against the sum of its parts, events/s against them.
    case worker
    /// The worker's own time and end-to-end latency at 10–75 % of the embedded pipeline's maximum rate.
    case latency
    /// Calls through `callpush run` processes while the consumer group changes (`scripts/group-changes.py`).
    case groups
    /// Resident memory of `callpush run` processes (idle, 10 000 events in flight, a steady run with faults) and of
    /// this process across repeated in-process pipeline runs.
    case memory

    /// Areas that measure what `callpush run` does, run in a process of their own with its malloc arena limit
    /// (``OwnProcessArea``): the latency area (the worker's latency) and the kafka area (the clients `run` uses).
    var runsInOwnProcess: Bool { self == .kafka || self == .latency }

    var summary: String {
        switch self {
        case .http2: "our HTTP/2 client vs h2load (against nghttpd); h2load against our server vs nghttpd"
        case .apns: "APNsClient vs h2load against the mock APNs server over 1, 2 and 4 connections"
        case .mock: "callpush mock-apns vs nghttpd under h2load, JWT-authenticated APNs requests, 4 × 100 streams"
        case .peers: "APNsClient vs aioapns on mock-apns (same key, 2 connections); pushes/s at 50 ms RTT vs streams ÷ RTT"
        case .kafka: "in-process produce/consume msgs/s vs kcat on the same kind of embedded mock cluster"
        case .json: "CallEventDecoder/PushMapper vs JSONSerialization/JSONDecoder"
        case .pipeline: "events/s through the embedded pipeline vs min(Kafka consume, APNs client) rates"
        case .worker: "callpush run as a process: CPU/event vs client + consumer + producer parts; events/s vs min(consume, client)"
        case .latency: "worker's own time and end-to-end p50/p99 at 10, 25, 50, 75 % of the pipeline's maximum rate"
        case .groups: "calls while the group changes: p99 of partitions that do not move vs steady; moved partitions' wait after a SIGKILL vs session timeout"
        case .memory: "callpush run RSS idle, peak at 10k events in flight, flatness at 1000 events/s with faults; RSS across in-process pipeline runs"
        }
    }
}
