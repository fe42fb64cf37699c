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

extension AreaResult {
    /// The result as lines of tab-separated fields (`ratio`, `kafka-consume`, `apns-client`, `note`), for an area run
    /// in a process of its own (``OwnProcessArea``); ``init(lines:)`` reads them back.
    var lines: [String] {
        var lines = ratios.map { ratio in
            ["ratio", ratio.area.rawValue, "\(ratio.value)", "\(ratio.reference)", ratio.target?.text ?? "-", ratio.name]
                .joined(separator: "\t")
        }
        if let rate = kafkaConsumePerSecond { lines.append("kafka-consume\t\(rate)") }
        for (connections, rate) in apnsClientPerSecond.sorted(by: { $0.key < $1.key }) {
            lines.append("apns-client\t\(connections)\t\(rate)")
        }
        return lines + notes.map { "note\t" + $0 }
    }

    /// Reads ``lines`` back; lines it does not know are skipped.
    init(lines: [String]) {
        self.init()
        for line in lines {
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let fields = parts[1].split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            switch parts[0] {
            case "ratio" where fields.count == 5:
                guard let area = BenchArea(rawValue: fields[0]), let value = Double(fields[1]),
                      let reference = Double(fields[2]) else { continue }
                ratios.append(BenchRatio(area: area, name: fields[4], value: value, reference: reference,
                                         target: BenchTarget(text: fields[3])))
            case "kafka-consume":
                kafkaConsumePerSecond = Double(fields[0])
            case "apns-client" where fields.count == 2:
                if let connections = Int(fields[0]), let rate = Double(fields[1]) { apnsClientPerSecond[connections] = rate }
            case "note":
                notes.append(String(parts[1]))
            default:
                continue
            }
        }
    }
}
