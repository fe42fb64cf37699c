import Foundation

/// Number formatting for the report.
enum BenchFormat {
    static func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }

    /// A rate with thousands as `k`: `123.4k/s`.
    static func rate(_ perSecond: Double) -> String {
        perSecond >= 10_000 ? String(format: "%.1fk/s", perSecond / 1000) : String(format: "%.0f/s", perSecond)
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

    static func megabytes(_ kilobytes: Int) -> String { String(format: "%.1f MB", Double(kilobytes) / 1024) }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
