/// How a program run to completion (``ChildProcess/run(_:executable:environment:currentDirectory:input:timeoutSeconds:)``)
/// ended, and what it wrote.
package struct ProcessResult: Sendable {
    /// Its exit status, or the number of the signal that ended it; -1 when SIGKILL did (the time limit kills with it).
    package let status: Int32
    package let stdout: String
    package let stderr: String
    /// Whether the time limit ended it.
    package let timedOut: Bool

    /// stdout followed by stderr.
    package var output: String { stdout + stderr }
}
