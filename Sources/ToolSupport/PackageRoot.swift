package import Foundation

/// The package's root directory, for tests and tools that read its files (docs, scripts, deployment assets).
package enum PackageRoot {
    /// Three levels above this file, `<root>/Sources/ToolSupport/PackageRoot.swift`, where the compiler saw it.
    package static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}
