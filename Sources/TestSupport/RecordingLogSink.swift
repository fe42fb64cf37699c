@preconcurrency import Glibc
public import Telemetry
import Synchronization

/// Keeps every line in memory; for tests.
public final class RecordingLogSink: LogSink {
    private let storage = Mutex<[String]>([])

    public init() {}

    public func write(line: String) {
        storage.withLock { $0.append(line) }
    }

    /// The lines written so far.
    public var lines: [String] { storage.withLock { $0 } }
}
