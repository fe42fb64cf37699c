public import Foundation

/// The independent programs tests check callpush against (kcat, openssl, curl, nghttpd, h2load, …): where they are
/// installed, and running one to completion.
public enum ExternalTool {
    /// Where `name` is installed: the first executable `<directory>/<name>` of the directories on PATH, then
    /// `/usr/bin`, `/usr/sbin` and `/usr/local/bin` (a test runner's PATH may lack them; Debian puts nghttpd in
    /// `/usr/sbin`); a `name` with a slash is itself when it is executable. nil when none is.
    public static func path(_ name: String) -> String? {
        let files = FileManager.default
        if name.contains("/") { return files.isExecutableFile(atPath: name) ? name : nil }
        let searched = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/bin", "/usr/sbin", "/usr/local/bin"]
        return searched.lazy.filter { !$0.isEmpty }.map { $0 + "/" + name }.first { files.isExecutableFile(atPath: $0) }
    }

    /// Whether ``path(_:)`` finds `name`.
    public static func isInstalled(_ name: String) -> Bool { path(name) != nil }

    /// Runs `arguments` (the first names the tool, looked up on PATH) to completion with `input` on stdin, killed
    /// after `timeout` seconds; the exit status (-1 when killed) and stdout followed by stderr.
    public static func run(_ arguments: [String], input: String? = nil, timeout: TimeInterval = 30) throws
        -> (status: Int32, output: String)
    {
        let result = try Subprocess.run(arguments, input: input, timeoutSeconds: timeout)
        return (result.status, result.output)
    }
}
