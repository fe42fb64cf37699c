import Testing
@testable import Kafka

/// The producer's settings as librdkafka gets them.
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
}
