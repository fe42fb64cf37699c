import TestSupport
import Foundation
import Testing

@testable import Telemetry

@Suite struct LoggerTests {
    @Test func writesOneJSONObjectPerLine() throws {
        let sink = RecordingLogSink()
        var logger = Logger(label: "worker", level: .debug, sink: sink)
        logger[metadataKey: "kafka.topic"] = "calls"
        logger.info("event \"sent\"\n", metadata: ["apns.status": "200"])
        let line = try #require(sink.lines.first)
        #expect(!line.contains("\n"))
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["level"] == "info")
        #expect(object["label"] == "worker")
        #expect(object["message"] == "event \"sent\"\n")
        #expect(object["kafka.topic"] == "calls")
        #expect(object["apns.status"] == "200")
        let time = try #require(object["time"])
        #expect(time.count == 24 && time.hasSuffix("Z"))
    }

    @Test func dropsLinesBelowItsLevelWithoutBuildingThem() {
        let sink = RecordingLogSink()
        let logger = Logger(label: "x", level: .warning, sink: sink)
        var built = false
        logger.info({ built = true; return "hidden" }())
        logger.error("shown")
        #expect(!built)
        #expect(sink.lines.count == 1)
    }

    @Test func parsesLevelNames() {
        #expect(LogLevel(name: "WARN") == .warning)
        #expect(LogLevel(name: "debug") == .debug)
        #expect(LogLevel(name: "loud") == nil)
    }

    @Test func masksDeviceTokens() {
        let token = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7ee9f0"
        #expect(Logger.mask(token: token) == "a1b2…e9f0")
        #expect(Logger.mask(token: "abcd") == "****")
    }

    @Test func escapesControlCharacters() {
        #expect(JSONText.quoted("a\u{01}b\\c") == "\"a\\u0001b\\\\c\"")
    }
}
