import Foundation

/// Turns `argv`, the environment and an optional JSON file into ``ParsedOptions``, collecting every problem
/// as one clear line instead of stopping at the first.
struct OptionParser: Sendable {
    let command: String
    let specs: [OptionSpec]
    /// Whether `CALLPUSH_*` variables and `--config FILE` are read (the long-running commands).
    let readsEnvironment: Bool
    /// Largest number of positional words accepted.
    let maximumPositional: Int

    struct Failure: Error {
        let problems: [String]
    }

    func parse(_ arguments: [String], environment: [String: String]) -> Result<ParsedOptions, Failure> {
        var problems: [String] = []
        var fromFlags: [String: String] = [:]
        var positional: [String] = []
        var configFile: String?
        let byFlag = Dictionary(specs.map { ($0.flag, $0) }, uniquingKeysWith: { first, _ in first })
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                positional.append(contentsOf: arguments[index...])
                break
            }
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if readsEnvironment && name == "--config" {
                if let value = inlineValue ?? (index < arguments.count ? arguments[index] : nil) {
                    if inlineValue == nil { index += 1 }
                    configFile = value
                } else {
                    problems.append("--config needs a file path")
                }
                continue
            }
            guard let spec = byFlag[name] else {
                problems.append("unknown option \(name) for 'callpush \(command)'")
                continue
            }
            if spec.isFlagOnly && inlineValue == nil {
                fromFlags[spec.key] = "true"
                continue
            }
            guard let value = inlineValue ?? (index < arguments.count ? arguments[index] : nil), inlineValue != nil || !value.hasPrefix("--")
            else {
                problems.append("\(name) needs a value (\(spec.typeDescription))")
                continue
            }
            if inlineValue == nil { index += 1 }
            fromFlags[spec.key] = value
        }
        if positional.count > maximumPositional {
            problems.append("unexpected argument '\(positional[maximumPositional])' for 'callpush \(command)'")
        }

        var fromFile: [String: String] = [:]
        if let configFile {
            switch Self.readConfigFile(configFile, specs: specs) {
            case .success(let values): fromFile = values
            case .failure(let failure): problems.append(contentsOf: failure.problems)
            }
        }

        var values: [String: String] = [:]
        var sources: [String: String] = [:]
        for spec in specs {
            let candidates: [(String?, String)] = [
                (fromFlags[spec.key], "flag"),
                (readsEnvironment || spec.alwaysReadsEnvironment ? environment[spec.environmentName] : nil,
                 "environment \(spec.environmentName)"),
                (fromFile[spec.key], "file"),
                (spec.defaultValue, "default"),
            ]
            guard let (value, source) = candidates.first(where: { $0.0 != nil }).map({ ($0.0!, $0.1) }) else { continue }
            if let problem = spec.problem(with: value) {
                problems.append(source == "flag" ? problem : "\(problem) (from \(source))")
                continue
            }
            values[spec.key] = value
            sources[spec.key] = source
        }
        guard problems.isEmpty else { return .failure(Failure(problems: problems)) }
        let parser = self
        return .success(ParsedOptions(
            values: values, sources: sources, positional: positional, configFile: configFile,
            reparse: { parser.parse(arguments, environment: environment) }))
    }

    /// Keys of the config file whose values are structured and read on their own (``APNsAppsFile``).
    static let structuredKeys: Set<String> = [APNsAppsFile.key]

    /// Reads `{"kafka": {"brokers": "…"}}` or `{"kafka.brokers": "…"}` (both forms may mix).
    static func readConfigFile(_ path: String, specs: [OptionSpec]) -> Result<[String: String], Failure> {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(Failure(problems: ["cannot read config file \(path)"]))
        }
        guard let object = try? JSONSerialization.jsonObject(with: data), let root = object as? [String: Any] else {
            return .failure(Failure(problems: ["config file \(path) is not a JSON object"]))
        }
        var flat: [String: String] = [:]
        var problems: [String] = []
        func walk(_ dictionary: [String: Any], prefix: String) {
            for (key, value) in dictionary {
                let path = prefix.isEmpty ? key : "\(prefix).\(key)"
                if structuredKeys.contains(path) { continue }
                switch value {
                case let nested as [String: Any]: walk(nested, prefix: path)
                case let text as String: flat[path] = text
                case let number as NSNumber: flat[path] = number.stringValue  // booleans arrive as 1/0
                case let list as [Any]: flat[path] = list.map { "\($0)" }.joined(separator: ",")
                default: problems.append("config file \(path): unsupported value for \(path)")
                }
            }
        }
        walk(root, prefix: "")
        let known = Set(specs.map(\.key))
        for key in flat.keys.sorted() where !known.contains(key) {
            problems.append("config file \(path): unknown key \(key)")
        }
        return problems.isEmpty ? .success(flat) : .failure(Failure(problems: problems))
    }
}
