import APNs
import Foundation

/// The APNs connection options shared by `send` and `run`: credentials and endpoint. `run` reads them under the
/// `apns.` prefix (`--apns-key-file`, `CALLPUSH_APNS_KEY_FILE`), `send` without it (`--key-file`).
struct APNsOptions {
    let prefix: String

    var specs: [OptionSpec] {
        [
            OptionSpec(prefix + "key-file", .string, "token auth: the .p8 signing key from Apple"),
            OptionSpec(prefix + "key-id", .string, "token auth: the key's 10-character Key ID"),
            OptionSpec(prefix + "team-id", .string, "token auth: your 10-character Team ID"),
            OptionSpec(prefix + "certificate", .string, "certificate auth: client certificate (PEM)"),
            OptionSpec(prefix + "private-key", .string, "certificate auth: the certificate's private key (PEM)"),
            OptionSpec(prefix + "pkcs12", .string, "certificate auth: certificate and key as a .p12 file"),
            OptionSpec(prefix + "pkcs12-password", .string, default: "", secret: true, "password of --\(flagPrefix)pkcs12"),
            OptionSpec(prefix + "endpoint", .string, "HOST:PORT of an APNs-compatible server (e.g. the mock), instead of Apple's hosts"),
            OptionSpec(prefix + "ca-file", .string, "PEM CA to trust for --\(flagPrefix)endpoint (default: the system store)"),
        ]
    }

    private var flagPrefix: String { prefix.replacingOccurrences(of: ".", with: "-") }

    /// Token or certificate credentials; one line per problem when they are missing, mixed or unreadable.
    func credentials(_ options: ParsedOptions) -> Result<APNsCredentials, OptionParser.Failure> {
        let keyFile = options.string(prefix + "key-file")
        let certificate = options.string(prefix + "certificate")
        let pkcs12 = options.string(prefix + "pkcs12")
        let chosen = [keyFile, certificate, pkcs12].compactMap { $0 }
        let flag = { (name: String) in "--\(flagPrefix)\(name)" }
        guard chosen.count == 1 else {
            let problem = chosen.isEmpty
                ? "no APNs credentials: give \(flag("key-file")) (token auth), \(flag("certificate")) or \(flag("pkcs12"))"
                : "give only one of \(flag("key-file")), \(flag("certificate")) and \(flag("pkcs12"))"
            return .failure(.init(problems: [problem]))
        }
        var problems: [String] = []
        for path in chosen where !FileManager.default.isReadableFile(atPath: path) {
            problems.append("cannot read \(path)")
        }
        if let keyFile {
            let keyID = options.string(prefix + "key-id") ?? ""
            let teamID = options.string(prefix + "team-id") ?? ""
            if keyID.count != 10 { problems.append("\(flag("key-id")) must be the 10-character Key ID of \(keyFile)") }
            if teamID.count != 10 { problems.append("\(flag("team-id")) must be your 10-character Team ID") }
            return problems.isEmpty ? .success(.token(keyPath: keyFile, keyID: keyID, teamID: teamID)) : .failure(.init(problems: problems))
        }
        if let certificate {
            guard let key = options.string(prefix + "private-key") else {
                return .failure(.init(problems: problems + ["\(flag("certificate")) needs \(flag("private-key"))"]))
            }
            return problems.isEmpty ? .success(.certificate(certificatePath: certificate, privateKeyPath: key)) : .failure(.init(problems: problems))
        }
        // Not `defaulted`: an app of the apps file (`APNsAppsFile`) brings only the keys it names, no spec defaults.
        return problems.isEmpty
            ? .success(.certificate(pkcs12Path: pkcs12!, password: options.string(prefix + "pkcs12-password") ?? ""))
            : .failure(.init(problems: problems))
    }

    /// The custom endpoint, if one was given.
    func customEndpoint(_ options: ParsedOptions) -> Result<APNsEndpoint?, OptionParser.Failure> {
        guard let text = options.string(prefix + "endpoint") else {
            guard options.has(prefix + "ca-file") else { return .success(nil) }
            return .failure(.init(problems: [
                "--\(flagPrefix)ca-file applies only with --\(flagPrefix)endpoint: Apple's hosts are verified against the system trust store",
            ]))
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port) else {
            return .failure(.init(problems: ["--\(flagPrefix)endpoint must be HOST:PORT, got '\(text)'"]))
        }
        return .success(.custom(host: String(parts[0]), port: port, caFile: options.string(prefix + "ca-file")))
    }
}
