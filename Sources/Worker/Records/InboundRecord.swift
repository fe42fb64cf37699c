/// A consumed Kafka record, as plain values (the Kafka adapter fills it; nothing here depends on librdkafka).
struct InboundRecord: Sendable, Hashable {
    var topic: String
    var partition: Int32
    var offset: Int64
    var key: [UInt8]?
    var value: [UInt8]
    var headers: [RecordHeader]
    /// The record timestamp, milliseconds since the epoch.
    var timestampMilliseconds: Int64
    /// The partition's high watermark when this worker was assigned it (records below it are a replay or a
    /// backlog the worker reads ahead through); nil when unknown.
    var highWatermarkAtAssignment: Int64?

    init(
        topic: String,
        partition: Int32,
        offset: Int64,
        key: [UInt8]?,
        value: [UInt8],
        headers: [RecordHeader] = [],
        timestampMilliseconds: Int64,
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
    }
}
