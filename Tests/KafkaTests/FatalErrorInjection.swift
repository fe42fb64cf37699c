import CRdKafka

@testable import Kafka

// librdkafka's fabricated fatal errors (`rd_kafka_test_fatal_error`), for the fault tests; kept out of the product.

extension KafkaConsumer {
    func triggerFatalErrorForTesting() {
        _ = rd_kafka_test_fatal_error(handle.pointer, RD_KAFKA_RESP_ERR__FENCED, "test")
    }
}

extension KafkaProducer {
    func triggerFatalErrorForTesting() {
        _ = rd_kafka_test_fatal_error(handle.pointer, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, "test")
    }
}
