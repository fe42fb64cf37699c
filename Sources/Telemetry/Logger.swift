import Foundation

/// A structured logger that writes one JSON object per line:
/// `{"time":"2026-11-30T06:42:30.123Z","level":"info","label":"worker","message":"…","kafka.topic":"calls"}`.
///
/// A value type: copy it and add metadata per component (`logger[metadataKey: "apns.connection"] = "2"`).
/// Messages are constant strings; variable data goes into metadata. Never put a full device token into a
/// log line: use ``Logger/mask(token:)``.
package struct Logger: Sendable {
    package typealias Metadata = [String: String]

    /// The component name, written as `label`.
    let label: String
    /// Lines below this level are dropped before their message is built.
    var level: LogLevel
    /// Metadata added to every line of this logger.
    var metadata: Metadata
    private let sink: any LogSink

    /// - Parameters:
    ///   - label: the component name.
    ///   - level: the minimum level written. Default: `.info`.
    ///   - sink: where lines go. Default: stdout.
    package init(label: String, level: LogLevel = .info, sink: any LogSink = FileDescriptorLogSink()) {
        self.label = label
        self.level = level
        self.metadata = [:]
        self.sink = sink
    }

    package subscript(metadataKey key: String) -> String? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// A logger that drops everything; for code paths that take a logger but whose caller does not care.
    package static var disabled: Logger { Logger(label: "disabled", level: .critical, sink: DiscardingLogSink()) }

    package func log(_ level: LogLevel, _ message: @autoclosure () -> String, metadata extra: @autoclosure () -> Metadata = [:]) {
        guard level >= self.level else { return }
        var fields = metadata
        for (key, value) in extra() { fields[key] = value }
        sink.write(line: Self.render(time: Date(), level: level, label: label, message: message(), metadata: fields))
    }

    func trace(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.trace, message(), metadata: metadata())
    }
    package func debug(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.debug, message(), metadata: metadata())
    }
    package func info(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.info, message(), metadata: metadata())
    }
    package func notice(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.notice, message(), metadata: metadata())
    }
    package func warning(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.warning, message(), metadata: metadata())
    }
    package func error(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.error, message(), metadata: metadata())
    }
    package func critical(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) {
        log(.critical, message(), metadata: metadata())
    }

    /// Masks a device token for logs: the first and last 4 characters survive, e.g. `a1b2…e9f0`.
    /// Tokens of 8 characters or fewer are fully masked.
    static func mask(token: String) -> String {
        guard token.count > 8 else { return String(repeating: "*", count: token.count) }
        return "\(token.prefix(4))…\(token.suffix(4))"
    }

    // MARK: - Rendering

    static func render(time: Date, level: LogLevel, label: String, message: String, metadata: Metadata) -> String {
        var line = "{\"time\":"
        JSONText.appendString(ISO8601Time.format(time), to: &line)
        line += ",\"level\":"
        JSONText.appendString(level.description, to: &line)
        line += ",\"label\":"
        JSONText.appendString(label, to: &line)
        line += ",\"message\":"
        JSONText.appendString(message, to: &line)
        for key in metadata.keys.sorted() where !Self.reservedKeys.contains(key) {
            line += ","
            JSONText.appendString(key, to: &line)
            line += ":"
            JSONText.appendString(metadata[key]!, to: &line)
        }
        line += "}"
        return line
    }

    private static let reservedKeys: Set<String> = ["time", "level", "label", "message"]
}

private struct DiscardingLogSink: LogSink {
    func write(line: String) {}
}
