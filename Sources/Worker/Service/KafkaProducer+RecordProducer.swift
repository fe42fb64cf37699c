import Kafka

extension KafkaProducer: RecordProducer {
    func produce(_ record: KafkaProducerRecord, reportingTo handler: any KafkaDeliveryHandler, tag: Int) {
        do {
            try produce(record, handler: handler, tag: tag)
        } catch {
            handler.delivered(.failure(error), tag: tag)
        }
    }
}
