internal import Foundation
internal import Glibc
import Synchronization

/// Fresh directories for a test's files.
package enum TemporaryDirectory {
    /// A new directory `<prefix>-<UUID>` in the system's temporary directory.
    package static func make(prefix: String = "callpush-test") throws -> String {
        let path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A new directory like ``make(prefix:)`` for what a suite keeps for the whole test process (its keys and
    /// certificates), removed with its contents when the process exits.
    package static func makeForProcess(prefix: String) throws -> String {
        let path = try make(prefix: prefix)
        removedAtExit.withLock { paths in
            if paths.isEmpty { atexit(removeAtExit) }
            paths.append(path)
        }
        return path
    }

    private static let removedAtExit = Mutex<[String]>([])

    private static let removeAtExit: @convention(c) () -> Void = {
        for path in removedAtExit.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
