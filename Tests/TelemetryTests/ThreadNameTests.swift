import Foundation
import Synchronization
import Telemetry
import Testing

@Suite struct ThreadNameTests {
    /// Runs `body` on a new thread and returns what it returns.
    private func onNewThread(_ body: @escaping @Sendable () -> String) -> String {
        let result = Mutex<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            result.withLock { $0 = body() }
            finished.signal()
        }
        thread.start()
        finished.wait()
        return result.withLock { $0 } ?? ""
    }

    @Test(arguments: [
        ("kafka-consume", "kafka-consume"),
        ("http2-loop-12345678", "http2-loop-1234"),
        // 14 ASCII bytes and a 2-byte "é": the cut would split it, so it is left out whole.
        ("abcdefghijklmné", "abcdefghijklmn"),
        // 13 ASCII bytes and "é" fill the 15 bytes exactly: the character stays.
        ("abcdefghijklméx", "abcdefghijklmé"),
    ])
    func namesTheCallingThreadOnly(name: String, expected: String) {
        let before = ThreadName.current
        let seen = onNewThread {
            ThreadName.setCurrent(name)
            return ThreadName.current
        }
        #expect(seen == expected)
        #expect(ThreadName.current == before, "the caller's thread keeps its name")
        #expect(expected.utf8.count <= ThreadName.maximumLength)
    }

    @Test(arguments: [
        ("kafka-consume", "kafka-consume"), ("http2-loop-0", "http2-loop"), ("http2-loop-12", "http2-loop"),
        ("rdk:broker-1", "librdkafka"), ("rdk:main", "librdkafka"), ("oot.default-qos", "dispatch"),
        ("-qos.overcommit", "dispatch"), ("callpush", "callpush"), ("worker7", "worker7"), ("-1", "-1"),
    ])
    func threadNamesFallIntoFewGroups(name: String, group: String) {
        #expect(ThreadName.group(name) == group)
    }
}
