import Foundation

/// The independent programs tests and the bench check callpush against (kcat, openssl, curl, nghttpd, h2load, …):
/// where they are installed, and running one to completion.
package enum ExternalTool {
    /// Searched after the directories on PATH: a test runner's PATH may lack them, and Debian puts nghttpd in
    /// `/usr/sbin`.
    package static let fallbackDirectories = ["/usr/bin", "/usr/sbin", "/usr/local/bin"]

    /// The Debian package of each tool `make test-deps` installs.
    package static let debianPackages = [
        "curl": "curl", "h2load": "nghttp2-client", "kcat": "kcat", "nghttp": "nghttp2-client", "nghttpd": "nghttp2-server",
        "openssl": "openssl", "prometheus": "prometheus", "promtool": "prometheus", "python3": "python3",
    ]

    /// Where `name` is installed: the first executable `<directory>/<name>` of the directories on PATH, then of
    /// ``fallbackDirectories``; a `name` with a slash is itself when it is executable. nil when none is.
    package static func path(_ name: String) -> String? {
        let files = FileManager.default
        if name.contains("/") { return files.isExecutableFile(atPath: name) ? name : nil }
        let searched = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + fallbackDirectories
        return searched.lazy.filter { !$0.isEmpty }.map { $0 + "/" + name }.first { files.isExecutableFile(atPath: $0) }
    }

    /// Whether ``path(_:)`` finds `name`.
    package static func isInstalled(_ name: String) -> Bool { path(name) != nil }

    /// The path of each of `names`.
    /// - Throws: ``MissingToolError`` naming every one that ``path(_:)`` does not find.
    package static func locate(_ names: [String]) throws(MissingToolError) -> [String: String] {
        var found: [String: String] = [:]
        for name in names { found[name] = path(name) }
        let missing = names.filter { found[$0] == nil }
        guard missing.isEmpty else { throw MissingToolError(names: missing) }
        return found
    }

    /// Runs `arguments` (the first names the tool, found with ``path(_:)``, else looked up by `/usr/bin/env`) to
    /// completion with `input` on stdin, killed after `timeout` seconds.
    /// - Returns: the exit status (-1 when killed) and stdout followed by stderr.
    /// - Throws: ``ProcessStartError`` when it cannot start.
    package static func run(_ arguments: [String], input: String? = nil, timeout: Double = 30) throws(ProcessStartError)
        -> (status: Int32, output: String)
    {
        let result: ProcessResult
        if let name = arguments.first, let path = path(name) {
            result = try ChildProcess.run(Array(arguments.dropFirst()), executable: path, input: input, timeoutSeconds: timeout)
        } else {
            result = try ChildProcess.run(arguments, input: input, timeoutSeconds: timeout)
        }
        return (result.status, result.output)
    }
}
