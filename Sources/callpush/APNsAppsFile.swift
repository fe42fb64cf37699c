import APNs
import Foundation

/// `apns.apps` of a `--config` JSON file: the apps one process pushes to, each with its bundle id, its credentials
/// and optional mapping overrides. `run` reads it from `--config`, `send` and `mock-apns` from `--apps`.
///
/// ```json
/// {"apns": {"apps": [
///   {"bundle-id": "com.example.app", "key-file": "AuthKey_ABC123DEFG.p8", "key-id": "ABC123DEFG", "team-id": "DEF123GHIJ",
///    "mapping": {"incoming-category": "CALL", "loc-key": "CALL_FROM"}},
///   {"bundle-id": "com.example.enterprise", "certificate": "enterprise.pem", "private-key": "enterprise-key.pem"}
/// ]}}
/// ```
struct APNsAppsFile {
    /// One app as the file gives it.
    struct Entry {
        let app: APNsAppConfiguration
        /// Mapping settings by their `mapping.` name without the prefix (e.g. `incoming-category`).
        let mapping: [String: String]
    }

    /// The dotted key of the list.
    static let key = "apns.apps"
    /// The mapping settings an app may override.
    static let mappingKeys: Set<String> = [
        "incoming-title", "incoming-body", "incoming-category", "hangup-body", "hangup-category", "title-loc-key", "loc-key",
    ]
    private static let appKeys: Set<String> = [
        "bundle-id", "key-file", "key-id", "team-id", "certificate", "private-key", "pkcs12", "pkcs12-password", "mapping",
    ]

    /// The apps of the file at `path`: nil when it has no `apns.apps`; one line per problem otherwise (an empty list,
    /// unknown keys, values that are not strings, missing or mixed credentials, unreadable files, a key id that is
    /// not 10 characters), each naming the file, the entry and the file's key.
    static func read(_ path: String) -> Result<[Entry]?, OptionParser.Failure> {
        guard let data = FileManager.default.contents(atPath: path),
            let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return .failure(.init(problems: ["cannot read \(path) as a JSON object"])) }
        guard let value = (root["apns"] as? [String: Any])?["apps"] ?? root[key] else { return .success(nil) }
        guard let list = value as? [[String: Any]] else {
            return .failure(.init(problems: ["\(path): \(key) must be a list of objects"]))
        }
        guard !list.isEmpty else { return .failure(.init(problems: ["\(path): \(key) lists no apps"])) }
        var entries: [Entry] = []
        var problems: [String] = []
        for (index, object) in list.enumerated() {
            let name = "\(path): \(key)[\(index)]"
            var values: [String: String] = [:]
            var mapping: [String: String] = [:]
            var wrongType = false
            for (field, value) in object {
                guard appKeys.contains(field) else {
                    problems.append("\(name): unknown key \(field)")
                    continue
                }
                if field == "mapping" {
                    guard let overrides = value as? [String: String] else {
                        problems.append("\(name): mapping must be an object of strings")
                        continue
                    }
                    for unknown in overrides.keys.sorted() where !mappingKeys.contains(unknown) {
                        problems.append("\(name): unknown mapping key \(unknown)")
                    }
                    mapping = overrides
                } else if let text = value as? String {
                    values[field] = text
                } else {
                    problems.append("\(name): \(field) must be a string")
                    wrongType = true
                }
            }
            // A value of the wrong type is its own problem, not also a missing bundle id or credential.
            guard !wrongType else { continue }
            guard let bundleID = values["bundle-id"], !bundleID.isEmpty else {
                problems.append("\(name): bundle-id is required")
                continue
            }
            let options = ParsedOptions(values: values, sources: [:], positional: [])
            switch APNsOptions(prefix: "").credentials(options) {
            case .success(let credentials):
                entries.append(Entry(app: APNsAppConfiguration(bundleID: bundleID, credentials: credentials), mapping: mapping))
            case .failure(let failure):
                // The credential checks name flags (`--key-id`); here they are the entry's keys (`key-id`).
                problems += failure.problems.map { "\(name) (\(bundleID)): " + $0.replacingOccurrences(of: "--", with: "") }
            }
        }
        guard problems.isEmpty else { return .failure(.init(problems: problems)) }
        return .success(entries)
    }
}
