import Kafka

/// Produces the records of the dispatcher's outcomes. Each record's delivery report goes exactly once to `handler`
/// with `tag`: from the producer's thread, or at once on the calling thread when the producer refuses the record (its
/// queue full, the record too large). A failure the record itself causes is ``KafkaError/refusesRecord``. The Kafka
/// producer is the production implementation.
protocol RecordProducer: Sendable {
    func produce(_ record: KafkaProducerRecord, reportingTo handler: any KafkaDeliveryHandler, tag: Int)
}
