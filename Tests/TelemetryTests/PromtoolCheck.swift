import TestSupport

/// Pipes exposition text through `promtool check metrics` (Debian package `prometheus`).
enum PromtoolCheck {
    static func run(_ exposition: String) throws -> ProcessResult {
        try ChildProcess.run(["promtool", "check", "metrics"], input: exposition)
    }
}
