import Foundation

/// The parts of librdkafka's `statistics.interval.ms` JSON this module exports as metrics.
struct KafkaStatistics: Equatable, Sendable {
    /// `topics.*.partitions.*.consumer_lag` for partitions with a known lag (internal partition -1 and lag -1
    /// are skipped).
    var consumerLag: [KafkaTopicPartition: Int64] = [:]
    /// `brokers.*.rtt.p99` in seconds (falls back to `avg`), for real brokers (node id ≥ 0) with samples.
    var brokerRTT: [String: Double] = [:]
    /// `msg_cnt`: messages in the producer queue.
    var queuedMessages: Int64 = 0
    /// `cgrp`: the consumer group as this member sees it; nil for a producer.
    var group: KafkaGroupStatus?

    /// Parses the JSON text; `nil` when it is not a JSON object.
    static func parse(_ json: String) -> KafkaStatistics? {
        guard let data = json.data(using: .utf8),
            let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return nil }
        var result = KafkaStatistics()
        result.queuedMessages = int(root["msg_cnt"]) ?? 0
        result.group = (root["cgrp"] as? [String: Any]).flatMap(KafkaGroupStatus.init)
        if let topics = root["topics"] as? [String: Any] {
            for (topicName, topicValue) in topics {
                guard let topic = topicValue as? [String: Any],
                    let partitions = topic["partitions"] as? [String: Any]
                else { continue }
                for (partitionKey, partitionValue) in partitions {
                    guard let partitionID = Int32(partitionKey), partitionID >= 0,
                        let partition = partitionValue as? [String: Any],
                        let lag = int(partition["consumer_lag"]), lag >= 0
                    else { continue }
                    result.consumerLag[KafkaTopicPartition(topic: topicName, partition: partitionID)] = lag
                }
            }
        }
        if let brokers = root["brokers"] as? [String: Any] {
            for (name, brokerValue) in brokers {
                guard let broker = brokerValue as? [String: Any],
                    let nodeID = int(broker["nodeid"]), nodeID >= 0,
                    let rtt = broker["rtt"] as? [String: Any]
                else { continue }
                let samples = int(rtt["cnt"]) ?? 0
                let micros = int(rtt["p99"]).flatMap { $0 > 0 ? $0 : nil } ?? int(rtt["avg"]) ?? 0
                guard samples > 0 || micros > 0 else { continue }
                result.brokerRTT[name] = Double(micros) / 1_000_000
            }
        }
        return result
    }

    /// A JSON number as an integer.
    static func int(_ value: Any?) -> Int64? {
        (value as? NSNumber)?.int64Value
    }
}
