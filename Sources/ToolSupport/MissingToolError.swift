/// Programs ``ExternalTool/locate(_:)`` did not find, named with their Debian packages.
package struct MissingToolError: Error, CustomStringConvertible {
    package let names: [String]

    package var description: String {
        let named = names.map { name in ExternalTool.debianPackages[name].map { "\(name) (apt package \($0))" } ?? name }
        let install = names.allSatisfy { ExternalTool.debianPackages[$0] != nil } ? "; make test-deps installs them" : ""
        return "\(named.joined(separator: ", ")) not installed (looked on PATH and in "
            + "\(ExternalTool.fallbackDirectories.joined(separator: ", "))\(install))"
    }
}
