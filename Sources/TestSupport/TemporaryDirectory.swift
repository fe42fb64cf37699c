internal import Foundation

/// Fresh directories for a test's files.
public enum TemporaryDirectory {
    /// A new directory `<prefix>-<UUID>` in the system's temporary directory.
    public static func make(prefix: String = "callpush-test") throws -> String {
        let path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
