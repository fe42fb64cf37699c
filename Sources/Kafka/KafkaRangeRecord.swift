internal import CRdKafka

/// A record a ``KafkaRangeReader`` hands to a range's `each`: its offset and a copy of its value. Ranges are read for
/// their values (the worker's backlog and history scans look for stop events), so neither the key, the headers (which
/// librdkafka parses out of the record only when asked) nor the topic's name is copied for each record, as
/// ``KafkaMessage`` does for the consumer.
package struct KafkaRangeRecord: Sendable {
    package let offset: Int64
    /// The record value; empty for a null value.
    package let value: [UInt8]

    /// Copies the offset and value of a librdkafka message; `raw` stays the caller's to destroy.
    init(copying raw: UnsafeMutablePointer<rd_kafka_message_t>) {
        offset = raw.pointee.offset
        value = raw.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: raw.pointee.len)) } ?? []
    }
}
