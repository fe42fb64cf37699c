package import APNsMock
internal import Worker

/// The embedded default: an in-process Kafka cluster, the mock APNs server and workers, wired together on
/// 127.0.0.1 (used by `callpush demo`, the end-to-end tests and the benchmarks).
package struct EmbeddedPipelineConfiguration: Sendable {
    /// Mock Kafka brokers. Default: 3.
    package var brokers: Int = 3
    /// Partitions of every topic. Default: 4.
    package var partitions: Int = 4
    /// The bundle id the mock APNs accepts and events use. Default: `"com.example.callpush"`.
    package var bundleID: String = "com.example.callpush"
    /// Faults the mock APNs injects. Default: none.
    package var faults: APNsMockFaults = .none
    /// Seed of the mock's fault generator. Default: 0x5EED.
    package var seed: UInt64 = 0x5EED
    /// Requests the mock APNs server keeps for inspection (`mock.recorder.entries`); its counts cover every request
    /// either way. 0 keeps only the counts, as `callpush mock-apns` does: `callpush demo` and the benchmarks, where
    /// each kept request would cost the mock's event loop a copy of its headers and payload, and 10 000 of them hold
    /// about 10 MB until the pipeline is released. Default: 10 000 (tests read what was sent).
    package var mockRecorderCapacity: Int = 10_000
    /// HTTP/2 connections per APNs pool. Default: 2.
    package var apnsConnections: Int = 2
    /// Event-loop threads of the APNs client. Default: 2, as `callpush run`.
    var apnsEventLoops: Int = 2
    /// APNs request deadline. Default: 5 s.
    var apnsRequestTimeout: Duration = .seconds(5)
    /// Worker settings; bootstrap servers are filled in at start. Default: ``EmbeddedPipelineConfiguration/demoWorker``.
    var worker: WorkerConfiguration = Self.demoWorker

    package init() {}

    /// The worker tuned for an embedded run: retry tiers of 1 s, 3 s and 6 s (`calls.retry.1s`, …), receipts on,
    /// fast group membership and offset storage, and a 2 ms fetch wait: librdkafka's mock broker holds an empty fetch
    /// the whole `fetch.wait.max.ms` even when records arrive meanwhile (a Kafka broker answers it then), so with the
    /// worker's 10 ms records reached it in bursts every 10 ms, each one's last event queueing behind the rest (at
    /// half the maximum rate about half of those 10 ms), and waited 5 ms on average to be fetched.
    static var demoWorker: WorkerConfiguration {
        var worker = WorkerConfiguration()
        worker.dispatcher.routing.retry.tiers = [(1_000, "1s"), (3_000, "3s"), (6_000, "6s")].map {
            .init(topic: "calls.retry.\($0.1)", delay: .milliseconds($0.0))
        }
        worker.dispatcher.routing.retry.maximumAttempts = 4
        worker.dispatcher.routing.emitReceipts = true
        worker.dispatcher.produceRetryInitial = .milliseconds(50)
        worker.consumer.sessionTimeout = .seconds(6)
        worker.consumer.autoCommitInterval = .milliseconds(200)
        worker.consumer.offsetStoreInterval = .milliseconds(20)
        worker.consumer.fetchWaitMax = .milliseconds(2)
        worker.consumer.statisticsInterval = .seconds(1)
        worker.consumer.revokeDrainTimeout = .seconds(2)
        worker.consumer.closeDrainTimeout = .seconds(15)
        worker.producer.messageTimeout = .seconds(20)
        return worker
    }
}
