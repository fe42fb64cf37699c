internal import CRdKafka
import Glibc
import Telemetry

/// A message handed out by a ``KafkaConsumer``. Complete it with ``KafkaConsumer/complete(_:)`` once processed
/// (from any thread), or hand it back with ``KafkaConsumer/hold(_:until:)`` when it is not due yet.
///
/// Its topic, key, value and headers live in one shared object (``Contents``), so a copy costs one retain instead of
/// one per string and array: a consumed message is copied several times on its way (into the batch, the dispatcher's
/// event, the outcome's records), and those retains were a large share of the poll thread's work. Setting one of
/// them copies the object first when another message shares it.
package struct KafkaMessage: Sendable {
    /// What the message carries, shared between copies.
    final class Contents: Sendable {
        let topic: String
        let key: [UInt8]?
        let value: [UInt8]
        let headers: [KafkaHeader]
        let timestampMilliseconds: Int64?

        init(topic: String, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], timestampMilliseconds: Int64?) {
            self.topic = topic
            self.key = key
            self.value = value
            self.headers = headers
            self.timestampMilliseconds = timestampMilliseconds
        }

        /// The same contents with `change` applied: a new object, the shared one unchanged.
        func with(_ change: (inout (topic: String, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader],
                                    timestampMilliseconds: Int64?)) -> Void) -> Contents {
            var fields = (topic: topic, key: key, value: value, headers: headers, timestampMilliseconds: timestampMilliseconds)
            change(&fields)
            return Contents(topic: fields.topic, key: fields.key, value: fields.value, headers: fields.headers,
                            timestampMilliseconds: fields.timestampMilliseconds)
        }
    }

    private var contents: Contents
    package var partition: Int32
    package var offset: Int64

    package var topic: String {
        get { contents.topic }
        set { contents = contents.with { $0.topic = newValue } }
    }
    /// The record key; `nil` when the record has no key.
    package var key: [UInt8]? {
        get { contents.key }
        set { contents = contents.with { $0.key = newValue } }
    }
    /// The record value; empty for a null value.
    package var value: [UInt8] {
        get { contents.value }
        set { contents = contents.with { $0.value = newValue } }
    }
    /// Record headers, in record order. Duplicate names are allowed.
    package var headers: [KafkaHeader] {
        get { contents.headers }
        set { contents = contents.with { $0.headers = newValue } }
    }
    /// Record timestamp in milliseconds since the Unix epoch; `nil` when not available.
    package var timestampMilliseconds: Int64? {
        get { contents.timestampMilliseconds }
        set { contents = contents.with { $0.timestampMilliseconds = newValue } }
    }

    /// The partition's high watermark (the offset after its last record) as the first fetch after this member
    /// was assigned the partition reported it: records below it were already in the log at assignment — a replay
    /// of what a previous owner did not commit, or a backlog. `nil` when not known yet.
    package var highWatermarkAtAssignment: Int64?

    /// Whether this delivery ends a ``KafkaConsumer/hold(_:until:)`` of this message: its due time came. False on
    /// the first delivery, and for a message that was only kept behind another held one.
    package internal(set) var releasedFromHold = false

    /// The assignment generation that delivered this message; completions from an older one are ignored.
    var generation: UInt64

    /// A message as a consumer would hand it out (generation 0): for the modules above that take messages, and
    /// their tests.
    package init(
        topic: String,
        partition: Int32,
        offset: Int64,
        key: [UInt8]?,
        value: [UInt8],
        headers: [KafkaHeader] = [],
        timestampMilliseconds: Int64? = nil,
        highWatermarkAtAssignment: Int64? = nil
    ) {
        self.init(topic: topic, partition: partition, offset: offset, key: key, value: value, headers: headers,
                  timestampMilliseconds: timestampMilliseconds, generation: 0)
        self.highWatermarkAtAssignment = highWatermarkAtAssignment
    }

    init(
        topic: String,
        partition: Int32,
        offset: Int64,
        key: [UInt8]?,
        value: [UInt8],
        headers: [KafkaHeader],
        timestampMilliseconds: Int64?,
        generation: UInt64
    ) {
        contents = Contents(topic: topic, key: key, value: value, headers: headers,
                            timestampMilliseconds: timestampMilliseconds)
        self.partition = partition
        self.offset = offset
        self.highWatermarkAtAssignment = nil
        self.generation = generation
    }

    /// The name of `raw`'s topic ("" when it has none): `previous` itself when it is that name (no new `String` is
    /// made for consecutive messages of one topic, consumed or reported).
    static func topicName(of raw: UnsafePointer<rd_kafka_message_t>, previous: String) -> String {
        guard let name = raw.pointee.rkt.flatMap({ rd_kafka_topic_name($0) }) else { return "" }
        let same = previous.withUTF8InPlace { bytes in
            strlen(name) == bytes.count && (bytes.isEmpty || memcmp(name, bytes.baseAddress!, bytes.count) == 0)
        }
        return same ? previous : String(cString: name)
    }

    /// Copies a librdkafka message (partition, offset, key, value, headers, timestamp) of the topic `topic` (its
    /// ``topicName(of:previous:)``); `raw` stays the caller's to destroy. Its generation is 0 until a consumer stamps it.
    init(copying raw: UnsafeMutablePointer<rd_kafka_message_t>, topic: String) {
        let key: [UInt8]? = raw.pointee.key.map { pointer in
            Array(UnsafeRawBufferPointer(start: pointer, count: raw.pointee.key_len))
        }
        let value: [UInt8] = raw.pointee.payload.map { pointer in
            Array(UnsafeRawBufferPointer(start: pointer, count: raw.pointee.len))
        } ?? []
        var headers: [KafkaHeader] = []
        var headerList: OpaquePointer?
        if rd_kafka_message_headers(raw, &headerList) == RD_KAFKA_RESP_ERR_NO_ERROR, let headerList {
            var index = 0
            var name: UnsafePointer<CChar>?
            var bytes: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(headerList, index, &name, &bytes, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                let headerValue = bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
                headers.append(KafkaHeader(name: name.map { String(cString: $0) } ?? "", value: headerValue))
                index += 1
            }
        }
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(raw, &timestampType)
        self.init(
            topic: topic,
            partition: raw.pointee.partition,
            offset: raw.pointee.offset,
            key: key,
            value: value,
            headers: headers,
            timestampMilliseconds: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp,
            generation: 0
        )
    }

    package var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }

    /// The value of the first header called `name`.
    func header(_ name: String) -> [UInt8]? {
        headers.first { $0.name == name }?.value
    }
}

