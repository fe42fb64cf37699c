@preconcurrency import Glibc
import Synchronization

/// Where finished log lines go. Implementations must be safe to call from any thread.
package protocol LogSink: Sendable {
    /// Writes one complete JSON line (without the trailing newline).
    func write(line: String)
}

