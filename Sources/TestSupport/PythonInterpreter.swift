internal import Foundation

/// The Python that independent checks run under (PyJWT verifies our provider tokens, PyYAML parses the deployment
/// assets, aioapns pushes through the mock). A fresh Debian 12 has the first two only as Debian packages for
/// `/usr/bin/python3`, and aioapns only in the virtual environment `make test-deps` makes (`.build/python`, which
/// also sees Debian's packages); a developer's `python3` on PATH may be another interpreter (pyenv, a venv) with or
/// without them: the first candidate that imports every module a test needs wins.
package enum PythonInterpreter {
    /// The modules most tests import.
    package static let requiredModules = ["jwt", "cryptography", "yaml"]

    /// The interpreter for ``requiredModules``.
    package static let path: String = path(importing: requiredModules)

    /// `$CALLPUSH_PYTHON`, `<package root>/.build/python/bin/python3`, `python3` on PATH, then `/usr/bin/python3`:
    /// the first that imports `modules`; `python3` when none does (the test then fails with Python's own import
    /// error).
    package static func path(importing modules: [String]) -> String {
        var candidates = [PackageRoot.url.appendingPathComponent(".build/python/bin/python3").path, "python3", "/usr/bin/python3"]
        if let chosen = ProcessInfo.processInfo.environment["CALLPUSH_PYTHON"], !chosen.isEmpty {
            candidates.insert(chosen, at: 0)
        }
        let probe = "import " + modules.joined(separator: ", ")
        for candidate in candidates {
            if let result = try? ChildProcess.run([candidate, "-c", probe], timeoutSeconds: 30), result.status == 0 {
                return candidate
            }
        }
        return "python3"
    }
}
