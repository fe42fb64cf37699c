import Foundation

/// The reference tools from Debian packages, found on `PATH` (and in `/usr/sbin`, where nghttpd lives).
enum ExternalTool: String, CaseIterable {
    case h2load
    case nghttpd
    case kcat

    var package: String {
        switch self {
        case .h2load: "nghttp2-client"
        case .nghttpd: "nghttp2-server"
        case .kcat: "kcat"
        }
    }

    /// The executable's path, or nil when it is not installed.
    var path: String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/bin", "/usr/sbin", "/usr/local/bin"]
        return directories.map { $0 + "/" + rawValue }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Paths of every tool in `tools`, or nil after printing one skip line naming what is missing.
    static func require(_ tools: [ExternalTool], for what: String) -> [ExternalTool: String]? {
        var found: [ExternalTool: String] = [:]
        var missing: [ExternalTool] = []
        for tool in tools {
            if let path = tool.path { found[tool] = path } else { missing.append(tool) }
        }
        guard missing.isEmpty else {
            let names = missing.map { "\($0.rawValue) (apt package \($0.package))" }.joined(separator: ", ")
            print("  SKIP \(what): \(names) not installed (make test-deps installs them)")
            return nil
        }
        return found
    }
}
