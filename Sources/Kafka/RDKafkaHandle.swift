internal import CRdKafka

/// The single owner of one `rd_kafka_t`.
///
/// - Important: `@unchecked Sendable` because it only wraps a pointer to a librdkafka handle, which is
///   thread-safe for the calls this module makes. Destruction happens exactly once, through ``destroy(flags:)``
///   or `deinit`, after every queue, message and event taken from the handle has been destroyed.
final class RDKafkaHandle: @unchecked Sendable {
    enum Kind {
        case producer
        case consumer
    }

    private(set) var pointer: OpaquePointer?

    init(kind: Kind, config: RDKafkaConfig) throws(KafkaError) {
        var errorText = [CChar](repeating: 0, count: 512)
        let type = kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER
        guard let conf = config.pointer,
            let handle = rd_kafka_new(type, conf, &errorText, errorText.count)
        else {
            let reason = errorText.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw KafkaError(code: .creation, reason: "rd_kafka_new: \(reason)")
        }
        _ = config.release()
        pointer = handle
    }

    /// Destroys the handle (idempotent). `flags` are `rd_kafka_destroy_flags` flags.
    func destroy(flags: Int32 = 0) {
        guard let handle = pointer else { return }
        pointer = nil
        if flags == 0 {
            rd_kafka_destroy(handle)
        } else {
            rd_kafka_destroy_flags(handle, flags)
        }
    }

    /// Wakes the broker threads that fetch `partitions`: sends their leaders a ListOffsets request (for the latest
    /// offset; the answer does not matter) without waiting. librdkafka before 2.3.0 looks at a partition whose local
    /// queue was full again only when its broker thread wakes, on its own up to 1 s later; a request wakes it now.
    func wakeFetchers(_ partitions: [KafkaTopicPartition]) {
        guard !partitions.isEmpty else { return }
        let list = RDKafkaTopicPartitionList(capacity: partitions.count)
        // The offset field carries the timestamp to look up; -1 is "latest".
        for partition in partitions { list.add(partition, offset: -1) }
        _ = rd_kafka_offsets_for_times(pointer, list.pointer, 0)
    }

    /// The high watermark librdkafka learned from the partition's latest fetch response (no broker round trip);
    /// nil while no fetch response has arrived.
    func cachedHighWatermark(of partition: KafkaTopicPartition) -> Int64? {
        var low: Int64 = -1
        var high: Int64 = -1
        let err = rd_kafka_get_watermark_offsets(pointer, partition.topic, partition.partition, &low, &high)
        return err == RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0 ? high : nil
    }

    /// The fatal error that put the handle in the fatal state, if any.
    func fatalError() -> KafkaError? {
        var text = [CChar](repeating: 0, count: 512)
        let err = rd_kafka_fatal_error(pointer, &text, text.count)
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        let reason = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return KafkaError.rdKafka(err, reason: reason, isFatal: true)
    }

    deinit {
        destroy()
    }
}

/// The single owner of one `rd_kafka_queue_t` reference.
///
/// - Important: `@unchecked Sendable` pointer wrapper; `rd_kafka_queue_yield` and `rd_kafka_queue_poll` are
///   thread-safe. Must be destroyed before its handle.
final class RDKafkaQueue: @unchecked Sendable {
    private(set) var pointer: OpaquePointer?

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    func destroy() {
        guard let queue = pointer else { return }
        pointer = nil
        rd_kafka_queue_destroy(queue)
    }

    deinit {
        destroy()
    }
}
