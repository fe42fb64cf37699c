/// A record to produce (retry tier, dead letter, token invalidation, receipt). The partition is left to the
/// producer's partitioner on the key, so every hop of one call lands on the same partition number.
public struct OutboundRecord: Sendable, Hashable {
    public var topic: String
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [RecordHeader]

    public init(topic: String, key: [UInt8]?, value: [UInt8], headers: [RecordHeader] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
    }
}
