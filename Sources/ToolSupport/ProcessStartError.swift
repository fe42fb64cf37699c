import Glibc

/// A program that could not be started: a missing or non-executable file (`ENOENT`, `EACCES` from `posix_spawn`), or
/// a pipe or log file its start needed.
package struct ProcessStartError: Error, CustomStringConvertible {
    package let executable: String
    /// What failed before the spawn itself (a pipe, the log file); nil when the spawn did.
    package let detail: String?
    /// The `errno`, or `posix_spawn`'s result.
    package let code: Int32

    package var description: String {
        "cannot start \(executable): \(detail.map { "\($0): " } ?? "")\(String(cString: strerror(code)))"
    }
}
