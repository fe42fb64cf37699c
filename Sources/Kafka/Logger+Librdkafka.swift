import Telemetry

extension Logger {
    /// Logs one of librdkafka's log lines (its `level` a syslog severity, 0...7): severities up to warning at info,
    /// notice and info at debug, debug at trace, as `librdkafka: <message>` with its facility.
    func librdkafka(level: Int32, facility: String, message: String) {
        let mapped: LogLevel = switch level {
        case ...4: .info
        case 5, 6: .debug
        default: .trace
        }
        log(mapped, "librdkafka: \(message)", metadata: [KafkaLoggingKeys.facility: facility])
    }
}
