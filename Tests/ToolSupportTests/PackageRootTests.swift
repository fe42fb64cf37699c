import Foundation
import Testing
import ToolSupport

@Suite struct PackageRootTests {
    @Test func theRootHoldsThePackageManifestAndThisModule() throws {
        let manifest = try String(contentsOf: PackageRoot.url.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(#"name: "callpush""#))
        #expect(FileManager.default.fileExists(atPath: PackageRoot.url.appendingPathComponent("Sources/ToolSupport").path))
    }
}
