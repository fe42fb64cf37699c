/// A message handed out by a ``KafkaConsumer``. Complete it with ``KafkaConsumer/complete(_:)`` once processed
/// (from any thread), or hand it back with ``KafkaConsumer/hold(_:until:)`` when it is not due yet.
public struct KafkaMessage: Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    /// The record key; `nil` when the record has no key.
    public var key: [UInt8]?
    /// The record value; empty for a null value.
    public var value: [UInt8]
    /// Record headers, in record order. Duplicate names are allowed.
    public var headers: [KafkaHeader]
    /// Record timestamp in milliseconds since the Unix epoch; `nil` when not available.
    public var timestampMilliseconds: Int64?

    /// The partition's high watermark (the offset after its last record) as the first fetch after this member
    /// was assigned the partition reported it: records below it were already in the log at assignment — a replay
    /// of what a previous owner did not commit, or a backlog. `nil` when not known yet.
    public var highWatermarkAtAssignment: Int64?

    /// Whether this delivery ends a ``KafkaConsumer/hold(_:until:)`` of this message: its due time came. False on
    /// the first delivery, and for a message that was only kept behind another held one.
    public internal(set) var releasedFromHold = false

    /// The assignment generation that delivered this message; completions from an older one are ignored.
    var generation: UInt64

    init(
        topic: String,
        partition: Int32,
        offset: Int64,
        key: [UInt8]?,
        value: [UInt8],
        headers: [KafkaHeader] = [],
        timestampMilliseconds: Int64? = nil,
        highWatermarkAtAssignment: Int64? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestampMilliseconds = timestampMilliseconds
        self.highWatermarkAtAssignment = highWatermarkAtAssignment
        self.generation = 0
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
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestampMilliseconds = timestampMilliseconds
        self.highWatermarkAtAssignment = nil
        self.generation = generation
    }

    public var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }

    /// The value of the first header called `name`.
    func header(_ name: String) -> [UInt8]? {
        headers.first { $0.name == name }?.value
    }
}

