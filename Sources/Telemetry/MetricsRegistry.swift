import Synchronization

/// A Prometheus registry: families of counters, gauges and histograms with label sets, exposed in text
/// format 0.0.4.
///
/// Looking a series up takes a lock, so callers keep the returned handle and update it on the hot path,
/// where updates are lock-free. Asking twice for the same name and labels returns the same handle.
///
/// - Important: A name is bound to one type, help text and (for histograms) bucket layout by its first
///   registration; registering it again with a different type is a programming error.
package final class MetricsRegistry: Sendable {
    private struct Family {
        let name: String
        let help: String
        let type: MetricType
        var series: [String: Series] = [:]  // keyed by rendered label text
        /// The labels of each series, by the same key (for ``MetricsRegistry/removeSeries(labelled:)``).
        var labels: [String: [String: String]] = [:]
    }

    private enum Series {
        case counter(Counter)
        case gauge(Gauge)
        case histogram(Histogram)
    }

    private struct State {
        var families: [String: Family] = [:]
        var order: [String] = []
        var collectors: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    package init() {}

    // MARK: - Registration

    package func counter(_ name: String, help: String, labels: [String: String] = [:]) -> Counter {
        let series = series(name: name, help: help, type: .counter, labels: labels) { .counter(Counter()) }
        guard case .counter(let counter) = series else { preconditionFailure("\(name) is not a counter") }
        return counter
    }

    package func gauge(_ name: String, help: String, labels: [String: String] = [:]) -> Gauge {
        let series = series(name: name, help: help, type: .gauge, labels: labels) { .gauge(Gauge()) }
        guard case .gauge(let gauge) = series else { preconditionFailure("\(name) is not a gauge") }
        return gauge
    }

    /// One counter of `name` per key, labelled `label` = `value(key)`: the series of a closed set of label values,
    /// registered at once (so each shows 0 before it first counts) and looked up by key afterwards.
    package func counters<Key: Hashable>(
        _ name: String, help: String, label: String, keys: some Sequence<Key>, value: (Key) -> String
    ) -> [Key: Counter] {
        Dictionary(uniqueKeysWithValues: keys.map { ($0, counter(name, help: help, labels: [label: value($0)])) })
    }

    /// One gauge of `name` per key, as ``counters(_:help:label:keys:value:)``.
    package func gauges<Key: Hashable>(
        _ name: String, help: String, label: String, keys: some Sequence<Key>, value: (Key) -> String
    ) -> [Key: Gauge] {
        Dictionary(uniqueKeysWithValues: keys.map { ($0, gauge(name, help: help, labels: [label: value($0)])) })
    }

    package func histogram(
        _ name: String,
        help: String,
        labels: [String: String] = [:],
        buckets: [Double] = Histogram.latencyBuckets
    ) -> Histogram {
        precondition(zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 }, "buckets must ascend")
        let series = series(name: name, help: help, type: .histogram, labels: labels) {
            .histogram(Histogram(upperBounds: buckets))
        }
        guard case .histogram(let histogram) = series else { preconditionFailure("\(name) is not a histogram") }
        return histogram
    }

    /// Removes one series (e.g. the lag gauge of a partition this process no longer owns).
    package func remove(_ name: String, labels: [String: String]) {
        let key = Self.renderLabels(labels)
        state.withLock { state in
            _ = state.families[name]?.series.removeValue(forKey: key)
            _ = state.families[name]?.labels.removeValue(forKey: key)
        }
    }

    /// Removes every series, of every family, whose labels include all of `labels` (e.g. every series of a client
    /// that is gone, labelled with its `credential`). Handles still held keep working but are no longer exposed.
    /// - Returns: how many series were removed.
    @discardableResult
    package func removeSeries(labelled labels: [String: String]) -> Int {
        guard !labels.isEmpty else { return 0 }
        return state.withLock { state in
            var removed = 0
            for name in state.order {
                guard let family = state.families[name] else { continue }
                let matching = family.labels.filter { _, own in labels.allSatisfy { own[$0.key] == $0.value } }.keys
                for key in matching {
                    state.families[name]!.series.removeValue(forKey: key)
                    state.families[name]!.labels.removeValue(forKey: key)
                    removed += 1
                }
            }
            return removed
        }
    }

    /// Registers a closure run before every exposition, to refresh gauges derived from other state.
    package func addCollector(_ collector: @escaping @Sendable () -> Void) {
        state.withLock { $0.collectors.append(collector) }
    }

    private func series(
        name: String,
        help: String,
        type: MetricType,
        labels: [String: String],
        make: () -> Series
    ) -> Series {
        precondition(Self.isValidName(name), "invalid metric name \(name)")
        precondition(labels.keys.allSatisfy(Self.isValidLabelName), "invalid label name in \(labels.keys)")
        let key = Self.renderLabels(labels)
        return state.withLock { state in
            if state.families[name] == nil {
                state.families[name] = Family(name: name, help: help, type: type)
                state.order.append(name)
            }
            precondition(state.families[name]!.type == type, "\(name) registered as \(state.families[name]!.type)")
            if let existing = state.families[name]!.series[key] { return existing }
            let created = make()
            state.families[name]!.series[key] = created
            state.families[name]!.labels[key] = labels
            return created
        }
    }

    // MARK: - Exposition

    /// The content type of ``exposition()``.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Renders every family in registration order, series sorted by labels, in text format 0.0.4.
    package func exposition() -> String {
        let collectors = state.withLock { $0.collectors }
        for collector in collectors { collector() }
        let families = state.withLock { state in state.order.compactMap { state.families[$0] } }
        var output = ""
        output.reserveCapacity(families.count * 256)
        for family in families where !family.series.isEmpty {
            output += "# HELP \(family.name) \(Self.escapeHelp(family.help))\n"
            output += "# TYPE \(family.name) \(family.type.rawValue)\n"
            for labelText in family.series.keys.sorted() {
                switch family.series[labelText]! {
                case .counter(let counter):
                    output += "\(family.name)\(labelText) \(Self.format(counter.value))\n"
                case .gauge(let gauge):
                    output += "\(family.name)\(labelText) \(Self.format(gauge.value))\n"
                case .histogram(let histogram):
                    Self.appendHistogram(histogram, name: family.name, labelText: labelText, to: &output)
                }
            }
        }
        return output
    }

    private static func appendHistogram(_ histogram: Histogram, name: String, labelText: String, to output: inout String) {
        let counts = histogram.cumulativeCounts
        let bounds = histogram.upperBounds.map(format) + ["+Inf"]
        for (bound, count) in zip(bounds, counts) {
            output += "\(name)_bucket\(insert(label: "le", value: bound, into: labelText)) \(count)\n"
        }
        output += "\(name)_sum\(labelText) \(format(histogram.sum))\n"
        output += "\(name)_count\(labelText) \(counts.last ?? 0)\n"
    }

    // MARK: - Text helpers

    static func renderLabels(_ labels: [String: String]) -> String {
        guard !labels.isEmpty else { return "" }
        let pairs = labels.keys.sorted().map { "\($0)=\"\(escapeLabelValue(labels[$0]!))\"" }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    private static func insert(label: String, value: String, into labelText: String) -> String {
        let pair = "\(label)=\"\(value)\""
        if labelText.isEmpty { return "{\(pair)}" }
        return String(labelText.dropLast()) + ",\(pair)}"
    }

    /// A label value with backslashes, double quotes and newlines escaped.
    static func escapeLabelValue(_ value: String) -> String { escape(value, quotes: true) }

    /// A help text with backslashes and newlines escaped.
    static func escapeHelp(_ help: String) -> String { escape(help, quotes: false) }

    /// `text` with backslashes and newlines (and double quotes when `quotes`) escaped. Most texts hold none, so it
    /// looks first and returns the text itself (two Foundation `replacingOccurrences` per help text dominated an
    /// exposition's CPU time). By Unicode scalar, not Character: a "\r\n" is one Character, and its "\n" must be
    /// escaped too.
    private static func escape(_ text: String, quotes: Bool) -> String {
        let needsEscaping = text.utf8.contains { byte in
            byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\n") || (quotes && byte == UInt8(ascii: "\""))
        }
        guard needsEscaping else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped.append(contentsOf: #"\\"#.unicodeScalars)
            case "\n": escaped.append(contentsOf: #"\n"#.unicodeScalars)
            case "\"" where quotes: escaped.append(contentsOf: #"\""#.unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
        return bytes.allSatisfy { $0 == UInt8(ascii: "_") || isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    static func isValidLabelName(_ name: String) -> Bool {
        isValidName(name) && !name.hasPrefix("__") && name != "le"
    }
}
