import Kafka

/// The Kafka producer as the dispatcher's ``RecordProducer``: one record, one delivery report, and a
/// ``RecordProduceError`` that says whether the record itself was refused.
struct KafkaRecordProducer: RecordProducer {
    let producer: KafkaProducer

    init(producer: KafkaProducer) {
        self.producer = producer
    }

    func produce(_ record: KafkaProducerRecord, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        do {
            try producer.produce(record) { result in
                completion(result.map { _ in () }.mapError(Self.produceError))
            }
        } catch {
            completion(.failure(Self.produceError(error)))
        }
    }

    private static func produceError(_ error: KafkaError) -> any Error {
        RecordProduceError(code: error.name, reason: error.reason, isRetriable: !error.refusesRecord)
    }
}
