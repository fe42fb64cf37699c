import Kafka

/// Produces one record and reports, exactly once, whether the broker acknowledged it.
/// The Kafka producer is the production implementation.
protocol RecordProducer: Sendable {
    func produce(_ record: KafkaProducerRecord, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
}
