import Testing
@testable import Kafka

/// The producer's settings as librdkafka gets them (and the consumer's, where they share one).
@Suite struct KafkaProducerConfigurationTests {
    @Test(arguments: [
        (Duration.milliseconds(5), "5"), (.microseconds(500), "0.5"), (.microseconds(250), "0.25"),
        (.microseconds(1), "0.001"), (.microseconds(1500), "1.5"), (.zero, "0"), (.nanoseconds(999), "0"),
    ])
    func lingerIsRenderedInMillisecondsToTheMicrosecond(linger: Duration, rendered: String) {
        var configuration = KafkaProducerConfiguration()
        configuration.linger = linger
        #expect(configuration.dictionary["linger.ms"] == rendered)
    }

    /// librdkafka 2.0.2 takes `linger.ms` as a float: a fraction of a millisecond is not refused.
    @Test func librdkafkaTakesAFractionalLinger() {
        var configuration = KafkaProducerConfiguration()
        configuration.linger = .microseconds(500)
        #expect(configuration.problems.isEmpty, "\(configuration.problems)")
        configuration.additionalProperties = ["linger.ms": "x"]
        #expect(!configuration.problems.isEmpty, "a value librdkafka cannot read is refused")
    }

    /// Broker sockets send at once (TCP_NODELAY, as the Java client does): with Nagle's algorithm a produce request
    /// written while the previous one is unacknowledged waited for that acknowledgement.
    @Test func brokerSocketsDisableNagleUnlessOverridden() {
        var producer = KafkaProducerConfiguration()
        var consumer = KafkaConsumerConfiguration()
        #expect(producer.dictionary["socket.nagle.disable"] == "true")
        #expect(consumer.dictionary["socket.nagle.disable"] == "true")
        #expect(producer.problems.isEmpty && consumer.problems.isEmpty, "librdkafka takes the setting")
        producer.additionalProperties = ["socket.nagle.disable": "false"]
        consumer.additionalProperties = ["socket.nagle.disable": "false"]
        #expect(producer.dictionary["socket.nagle.disable"] == "false")
        #expect(consumer.dictionary["socket.nagle.disable"] == "false")
    }
}
