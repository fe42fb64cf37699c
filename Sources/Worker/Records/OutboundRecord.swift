/// A record to produce (retry tier, dead letter, token invalidation, receipt).
///
/// Retry records carry the partition number of the record they came from, so every hop of one call stays on one
/// partition number (and so with one worker) whatever partitioner upstream used; the others leave the partition to
/// the producer's partitioner on the key.
struct OutboundRecord: Sendable, Hashable {
    var topic: String
    /// The partition to produce to; nil lets the producer's partitioner pick one from the key.
    var partition: Int32?
    var key: [UInt8]?
    var value: [UInt8]
    var headers: [RecordHeader]

    init(topic: String, partition: Int32? = nil, key: [UInt8]?, value: [UInt8], headers: [RecordHeader] = []) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
    }

    /// Bytes of its header names and values (what Kafka's size limits count besides key and value).
    var headerBytes: Int { headers.byteCount }
}
