@preconcurrency import Glibc
import Telemetry
import Synchronization

/// Keeps every line in memory; for tests.
package final class RecordingLogSink: LogSink {
    private let storage = Mutex<[String]>([])

    package init() {}

    package func write(line: String) {
        storage.withLock { $0.append(line) }
    }

    /// The lines written so far.
    package var lines: [String] { storage.withLock { $0 } }
}
