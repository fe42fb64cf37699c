/// What an area measured: the ratios for the summary, and the raw rates other areas use as references.
struct AreaResult: Sendable {
    var ratios: [BenchRatio] = []
    /// Kafka consume rate (msgs/s) of the in-process consumer, from the kafka area.
    var kafkaConsumePerSecond: Double?
    /// APNsClient pushes/s against the mock, by connection count, from the apns area.
    var apnsClientPerSecond: [Int: Double] = [:]
    /// Lines for the summary that are not ratios (e.g. latency, memory).
    var notes: [String] = []

    mutating func merge(_ other: AreaResult) {
        ratios += other.ratios
        if let rate = other.kafkaConsumePerSecond { kafkaConsumePerSecond = rate }
        apnsClientPerSecond.merge(other.apnsClientPerSecond) { $1 }
        notes += other.notes
    }

    /// Records `ratio` and prints its line.
    mutating func report(_ ratio: BenchRatio) {
        print(ratio.line)
        ratios.append(ratio)
    }
}
