import ToolSupport

extension ExternalTool {
    /// The paths of `names`, or nil after printing one SKIP line for `what` naming those that are missing.
    static func require(_ names: [String], for what: String) -> [String: String]? {
        do {
            return try locate(names)
        } catch {
            print("  SKIP \(what): \(error)")
            return nil
        }
    }
}
