internal import CRdKafka
import Synchronization

/// librdkafka's built-in mock Kafka cluster (`rdkafka_mock.h`), in process, on loopback ports.
///
/// Every client (ours, or `kcat`) reaches it through ``bootstrapServers``. Supports produce (idempotent too),
/// consumer groups with offset commits, and fault injection. Destroyed by ``close()`` or `deinit`.
///
/// - Important: librdkafka marks the mock API experimental; it is for tests, demos and benchmarks only.
package final class KafkaMockCluster: Sendable {
    /// Kafka protocol API keys for ``pushRequestErrors(_:_:)``.
    struct APIKey: Hashable, Sendable {
        let rawValue: Int16
        init(rawValue: Int16) { self.rawValue = rawValue }

        package static let produce = APIKey(rawValue: 0)
        static let fetch = APIKey(rawValue: 1)
        static let listOffsets = APIKey(rawValue: 2)
        static let metadata = APIKey(rawValue: 3)
        static let offsetCommit = APIKey(rawValue: 8)
        static let offsetFetch = APIKey(rawValue: 9)
        static let findCoordinator = APIKey(rawValue: 10)
        static let joinGroup = APIKey(rawValue: 11)
        static let heartbeat = APIKey(rawValue: 12)
        static let syncGroup = APIKey(rawValue: 14)
        static let initProducerID = APIKey(rawValue: 22)
    }

    /// The cluster's `host:port,…` bootstrap list.
    package let bootstrapServers: String
    /// Broker ids are `1...brokerCount`.
    let brokerCount: Int
    private let owner: Mutex<Owner>

    /// The single owner of the mock cluster and the handle it runs on; destroys the cluster first.
    ///
    /// - Important: `@unchecked Sendable` pointer wrapper; only touched under ``owner``'s lock.
    private struct Owner: @unchecked Sendable {
        var cluster: OpaquePointer?
        var handle: RDKafkaHandle?

        mutating func destroy() {
            if let cluster { rd_kafka_mock_cluster_destroy(cluster) }
            cluster = nil
            handle?.destroy()
            handle = nil
        }
    }

    /// Starts a cluster of `brokers` brokers.
    package init(brokers: Int = 3) throws(KafkaError) {
        guard brokers > 0 else { throw KafkaError.configuration("a mock cluster needs at least one broker") }
        // Any handle will do; a producer with no bootstrap servers never connects anywhere by itself. The mock's
        // brokers take their accepted sockets' options from this handle: TCP_NODELAY, as a Kafka broker sets on every
        // connection it accepts. With Nagle on, a response written while the connection's previous one was not yet
        // acknowledged waited for the client's next request to carry that acknowledgement: the second of two produce
        // requests a client sends a broker at once (one per partition) was answered one consume cycle later, ~11 ms
        // in the latency bench, at the worker's p90.
        let config = try RDKafkaConfig(["log_level": "3", "socket.nagle.disable": "true"])
        let handle = try RDKafkaHandle(kind: .producer, config: config)
        guard let cluster = rd_kafka_mock_cluster_new(handle.pointer, Int32(brokers)) else {
            throw KafkaError(code: .creation, reason: "rd_kafka_mock_cluster_new failed")
        }
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        brokerCount = brokers
        owner = Mutex(Owner(cluster: cluster, handle: handle))
    }

    /// Creates a topic (clients do not auto-create topics).
    package func createTopic(_ name: String, partitions: Int, replicationFactor: Int = 1) throws(KafkaError) {
        try check { rd_kafka_mock_topic_create($0, name, Int32(partitions), Int32(replicationFactor)) }
    }

    /// Makes the next `errors.count` requests of `apiKey`, cluster-wide, fail with these errors in order.
    /// `KafkaError.Code.transport` makes the broker drop the connection.
    func pushRequestErrors(_ apiKey: APIKey, _ errors: [KafkaError.Code]) {
        withCluster { cluster in
            var codes = errors.map { rd_kafka_resp_err_t(rawValue: $0.rawValue) }
            codes.withUnsafeMutableBufferPointer { buffer in
                rd_kafka_mock_push_request_errors_array(cluster, apiKey.rawValue, buffer.count, buffer.baseAddress)
            }
        }
    }

    /// Takes a broker down (its connections close and it refuses new ones). Leadership does not move.
    ///
    /// librdkafka 2.0.2 closes the broker's listening socket and binds its port again at once, and aborts the process
    /// when that bind fails: it does while a child process is being started (the child holds a copy of the socket until
    /// its exec). Tests call it inside `ChildProcess.withNoneStarting`.
    func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        try check { rd_kafka_mock_broker_set_down($0, brokerID) }
    }

    /// Brings a broker back up.
    func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try check { rd_kafka_mock_broker_set_up($0, brokerID) }
    }

    /// Adds round-trip latency to a broker's responses.
    func setRoundTripTime(_ brokerID: Int32, _ rtt: Duration) throws(KafkaError) {
        try check { rd_kafka_mock_broker_set_rtt($0, brokerID, Int32(clamping: rtt.inMilliseconds)) }
    }

    /// Moves a partition's leadership (use with ``setBrokerDown(_:)`` to simulate failover).
    func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) throws(KafkaError) {
        try check { rd_kafka_mock_partition_set_leader($0, topic, partition, brokerID) }
    }

    /// Makes a broker the group coordinator for `groupID`.
    func setGroupCoordinator(groupID: String, brokerID: Int32) throws(KafkaError) {
        try check { rd_kafka_mock_coordinator_set($0, "group", groupID, brokerID) }
    }

    /// Destroys the cluster (idempotent); clients still connected see their brokers vanish.
    package func close() {
        owner.withLock { $0.destroy() }
    }

    deinit {
        owner.withLock { $0.destroy() }
    }

    private func withCluster(_ body: (OpaquePointer) -> Void) {
        owner.withLock { owner in
            if let cluster = owner.cluster { body(cluster) }
        }
    }

    private func check(_ body: (OpaquePointer) -> rd_kafka_resp_err_t) throws(KafkaError) {
        let err = owner.withLock { owner -> Int32? in
            guard let cluster = owner.cluster else { return nil }
            return body(cluster).rawValue
        }
        guard let err else { throw KafkaError.closed() }
        guard err == 0 else { throw KafkaError.rdKafka(rd_kafka_resp_err_t(rawValue: err)) }
    }
}
