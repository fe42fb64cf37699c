public import Foundation

/// The Python that independent checks run under (PyJWT verifies our provider tokens, PyYAML parses the deployment
/// assets). A fresh Debian 12 has them only as Debian packages for `/usr/bin/python3` (`make test-deps` installs
/// python3-jwt, python3-cryptography and python3-yaml), while a developer's `python3` on PATH may be another
/// interpreter (pyenv, a venv) with or without them: the first candidate that imports every module wins.
public enum PythonInterpreter {
    /// The modules the tests import.
    public static let requiredModules = ["jwt", "cryptography", "yaml"]

    /// `$CALLPUSH_PYTHON`, `python3` on PATH, then `/usr/bin/python3`: the first that imports
    /// ``requiredModules``; `python3` when none does (the test then fails with Python's own import error).
    public static let path: String = {
        var candidates = ["python3", "/usr/bin/python3"]
        if let chosen = ProcessInfo.processInfo.environment["CALLPUSH_PYTHON"], !chosen.isEmpty {
            candidates.insert(chosen, at: 0)
        }
        let probe = "import " + requiredModules.joined(separator: ", ")
        for candidate in candidates {
            if let result = try? Subprocess.run([candidate, "-c", probe], timeoutSeconds: 30), result.status == 0 {
                return candidate
            }
        }
        return "python3"
    }()
}
