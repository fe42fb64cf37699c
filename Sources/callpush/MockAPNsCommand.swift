import APNs
import APNsMock
import Crypto
import Foundation
import Telemetry

/// `callpush mock-apns`: the APNs-faithful mock server on its own.
struct MockAPNsCommand: Command {
    let name = "mock-apns"
    let summary = "run the APNs-faithful mock server (HTTP/2 over TLS) with fault injection"
    let usage = """
        Usage: callpush mock-apns [options]

        Serves Apple's provider API (POST /3/device/<token>) over HTTP/2 + TLS (ALPN h2), validating every request
        as APNs does and answering with APNs' status codes, JSON reasons and apns-id. The first line of stdout is
        'HOST:PORT ca=CERTIFICATE.pem' (the certificate is generated at start unless given; clients trust it as
        their CA). apns-id is echoed exactly as sent; a request without one gets a generated uppercase id.

        Authentication, as APNs does it:
          --key-file        token mode: verifies ES256 provider tokens against the key; every connection starts at
                            one concurrent stream until its first valid token, then --max-streams.
          --client-ca       certificate mode: clients must present a certificate signed by the CA; authorization
                            is ignored. With --key-file (or token apps in --apps) a certificate is optional: a
                            connection that presents one is checked as certificate auth, the others as token auth.
          --apps            the apps file of 'callpush run' (apns.apps): each token app's key with its own team,
                            and each certificate app's certificate (signed by --client-ca, or self-signed), which
                            may push to its own bundle id only (another topic: 400 TopicDisallowed; a certificate
                            no app has: 403 BadCertificate). Both kinds may share one mock.
          none of these     a request without 'authorization: bearer <JWT>' gets 403 MissingProviderToken; tokens
                            must be well-formed ES256 JWTs with valid ages, but with no key their signature is not
                            checked.
          --accept-any-token  open mode for load tests: requests are accepted with or without a token (real APNs
                            has no such mode).

        While running, faults can be changed by writing lines to stdin: 'set <option> <value>' with the fault
        options below without dashes (e.g. 'set rate-503 0.2'), 'goaway', 'drop', 'stats' (prints counts by
        outcome as JSON), or 'deliveries' (prints every kept push answered 200, oldest first, one JSON line each:
        apns-collapse-id, the payload's pushType, apns-id, the kid of its provider token, its authentication
        ("token", "certificate" or "none") and the SHA-256 fingerprint of its client certificate; then 'end').
        On SIGINT/SIGTERM it prints the counts and exits.
        """
    let examples = [
        "callpush mock-apns --port 2197",
        "callpush mock-apns --accept-any-token --max-streams 1000",
        "callpush mock-apns --key-file AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ --bundle-id com.example.app",
        "callpush mock-apns --apps config.json --client-ca apps-ca.pem",
        "callpush mock-apns --rate-503 0.05 --latency-ms 20 --goaway-after 1000 --unregistered-tokens $TOKEN",
    ]
    static let faultOptions = [
        OptionSpec("unregistered-tokens", .string, "comma-separated device tokens answered 410 Unregistered"),
        OptionSpec("bad-tokens", .string, "comma-separated device tokens answered 400 BadDeviceToken"),
        OptionSpec("rate-429", .number(0...1), default: "0", "fraction of pushes answered 429 TooManyRequests"),
        OptionSpec("rate-500", .number(0...1), default: "0", "fraction answered 500 InternalServerError"),
        OptionSpec("rate-503", .number(0...1), default: "0", "fraction answered 503 ServiceUnavailable"),
        OptionSpec("latency-ms", .number(0...60_000), default: "0", "added latency per answer"),
        OptionSpec("jitter-ms", .number(0...60_000), default: "0", "random extra latency up to this"),
        OptionSpec("goaway-after", .integer(0...100_000_000), default: "0", "send GOAWAY after this many streams per connection (0: never)"),
        OptionSpec("drop-rate", .number(0...1), default: "0", "fraction of pushes that drop their connection"),
        OptionSpec("stall-rate", .number(0...1), default: "0", "fraction of pushes never answered"),
    ]
    var options: [OptionSpec] {
        [
            OptionSpec("host", .string, default: "127.0.0.1", "address to listen on"),
            OptionSpec("port", .integer(0...65535), default: "0", "port to listen on (0: any free port)"),
            OptionSpec("certificate", .string, "PEM certificate to serve (default: generate a self-signed one)"),
            OptionSpec("private-key", .string, "PEM private key of --certificate"),
            OptionSpec("client-ca", .string, "certificate mode: require client certificates signed by this CA (optional with token auth)"),
            OptionSpec("key-file", .string, "token mode: the .p8 key (or its public key PEM) whose tokens to accept"),
            OptionSpec("key-id", .string, "token mode: the key's 10-character Key ID"),
            OptionSpec("team-id", .string, "token mode: the 10-character Team ID tokens must carry"),
            OptionSpec("accept-any-token", .boolean, "open mode for load tests: accept requests without a provider token"),
            OptionSpec("bundle-id", .string, "comma-separated bundle ids that may be pushed to (default: any)"),
            OptionSpec("apps", .string, "the apps file of 'callpush run' (apns.apps): accept each token app's key and team and each certificate app's certificate, for their own bundle ids"),
            OptionSpec("max-streams", .integer(1...100_000), default: "1000", "MAX_CONCURRENT_STREAMS once authenticated"),
            OptionSpec("seed", .integer(0...Int.max), default: "24301", "seed of the fault generator"),
            OptionSpec("record", .integer(0...10_000_000), default: "0", "requests kept for 'deliveries' (the most recent; 0: counts only)"),
        ] + Self.faultOptions
    }

    func run(_ options: ParsedOptions) async -> Int32 {
        let signals = ShutdownSignals()
        var configuration = APNsMockServerConfiguration()
        configuration.host = options.defaulted("host")
        configuration.port = options.defaultedInteger("port")
        configuration.certificateFile = options.string("certificate")
        configuration.privateKeyFile = options.string("private-key")
        configuration.clientCAFile = options.string("client-ca")
        configuration.maxConcurrentStreams = options.defaultedInteger("max-streams")
        configuration.seed = UInt64(options.defaultedInteger("seed"))
        // Counts only (what 'stats' shows), unless --record keeps requests for 'deliveries'.
        configuration.recorderCapacity = options.defaultedInteger("record")
        configuration.apns.allowedBundleIDs = Set(options.list("bundle-id"))
        if (configuration.certificateFile == nil) != (configuration.privateKeyFile == nil) {
            CommandLineTool.printError("--certificate and --private-key go together; see 'callpush mock-apns --help'")
            return ExitStatus.usage
        }
        let acceptAnyToken = options.boolean("accept-any-token")
        if acceptAnyToken, options.has("key-file") || options.has("client-ca") {
            CommandLineTool.printError(
                "--accept-any-token cannot go with --key-file or --client-ca; see 'callpush mock-apns --help'")
            return ExitStatus.usage
        }
        if acceptAnyToken {
            configuration.apns.authentication = .acceptAnyToken
        } else if configuration.clientCAFile != nil {
            configuration.apns.authentication = .certificate
        } else if options.string("key-file") == nil {
            configuration.apns.authentication = .unverifiedProviderToken
        }
        if let keyFile = options.string("key-file") {
            guard let keyID = options.string("key-id"), let teamID = options.string("team-id") else {
                CommandLineTool.printError("--key-file needs --key-id and --team-id; see 'callpush mock-apns --help'")
                return ExitStatus.usage
            }
            guard let key = Self.publicKey(from: keyFile) else {
                CommandLineTool.printError("cannot read an EC P-256 key from \(keyFile)")
                return ExitStatus.usage
            }
            configuration.apns.authentication = .providerToken(keys: [keyID: key], teamID: teamID)
        }
        // The apps' certificates and --client-ca combined in one file for OpenSSL, which reads it once at start.
        var combinedCAFile: String?
        if let appsFile = options.string("apps") {
            switch Self.applyApps(appsFile, to: &configuration) {
            case .failure(let problem):
                CommandLineTool.printError(problem.message)
                return ExitStatus.usage
            case .success(let written):
                combinedCAFile = written
            }
        }
        if configuration.clientCAFile != nil, case .providerToken = configuration.apns.authentication {
            // Both kinds on one server: a client certificate is requested, but a token client needs none.
            configuration.clientCertificateOptional = true
        }
        var faults = APNsMockFaults.none
        for spec in Self.faultOptions {
            if let value = options.string(spec.key) { _ = Self.apply(spec.key, value, to: &faults) }
        }
        configuration.faults = faults
        let started = Result { try APNsMockServer(configuration: configuration) }
        // Started or not, OpenSSL is done with the combined file.
        if let combinedCAFile { try? FileManager.default.removeItem(atPath: combinedCAFile) }
        let server: APNsMockServer
        switch started {
        case .success(let running): server = running
        case .failure(let error):
            CommandLineTool.printError("cannot start the mock APNs server: \(error)")
            return ExitStatus.failure
        }
        Output.line("\(configuration.host):\(server.port) ca=\(server.certificatePath)")
        let control = Task.detached { Self.readControlLines(server: server) }
        _ = await signals.wait()
        control.cancel()
        Output.line(Self.statsJSON(server))
        server.stop()
        return ExitStatus.success
    }

    /// Accepts the apps of an apps file, token and certificate apps alike: each token app's key with its own team,
    /// and each certificate app's certificate, registered by fingerprint for its bundle id only; only the apps'
    /// bundle ids may be pushed to. Client certificates must verify against `--client-ca` or be one of the apps'
    /// certificates (self-signed ones need no CA). Returns the temporary file it wrote the trusted certificates to
    /// (nil when there are no certificate apps), or a problem line.
    private static func applyApps(
        _ path: String, to configuration: inout APNsMockServerConfiguration
    ) -> Result<String?, AppsProblem> {
        let entries: [APNsAppsFile.Entry]
        switch APNsAppsFile.read(path) {
        case .failure(let failure): return .failure(AppsProblem(message: failure.problems.joined(separator: "; ")))
        case .success(nil): return .failure(AppsProblem(message: "\(path) has no apns.apps"))
        case .success(let list?): entries = list
        }
        var keys: [String: ES256PublicKey] = [:]
        var teams: [String: String] = [:]
        var certificates: [CertificateFingerprint: Set<String>] = [:]
        var trusted: [String] = []
        for entry in entries {
            switch entry.app.credentials.kind {
            case .token(let token):
                guard case .file(let keyFile) = token.key, let key = publicKey(from: keyFile) else {
                    return .failure(AppsProblem(message: "cannot read an EC P-256 key for \(entry.app.metricLabel)"))
                }
                keys[token.keyID] = key
                teams[token.keyID] = token.teamID
            case .certificate(let certificate):
                guard let pem = try? certificate.loadPEM(), let fingerprint = try? CertificateFingerprint(pem: pem.certificatePEM)
                else { return .failure(AppsProblem(message: "cannot read the certificate of \(entry.app.metricLabel)")) }
                certificates[fingerprint, default: []].formUnion(entry.app.bundleID.map { [$0] } ?? [])
                trusted.append(pem.certificatePEM)
            }
        }
        configuration.apns.allowedBundleIDs.formUnion(entries.compactMap(\.app.bundleID))
        if let first = teams.first {
            configuration.apns.authentication = .providerToken(keys: keys, teamID: first.value)
            configuration.apns.keyTeams = teams
        }
        guard !certificates.isEmpty else { return .success(nil) }
        if keys.isEmpty { configuration.apns.authentication = .certificate }
        configuration.apns.clientCertificates = certificates
        if let clientCA = configuration.clientCAFile {
            guard let text = try? String(contentsOfFile: clientCA, encoding: .utf8) else { return .failure(AppsProblem(message: "cannot read \(clientCA)")) }
            trusted.insert(text, at: 0)
        }
        let bundle = NSTemporaryDirectory() + "callpush-mock-client-ca-\(getpid()).pem"
        guard FileManager.default.createFile(atPath: bundle, contents: Data(trusted.joined(separator: "\n").utf8)) else {
            return .failure(AppsProblem(message: "cannot write \(bundle)"))
        }
        configuration.clientCAFile = bundle
        return .success(bundle)
    }

    /// Why an apps file cannot configure the mock, as one line for the user.
    private struct AppsProblem: Error {
        let message: String
    }

    /// Reads `set …`, `goaway`, `drop`, `stats` lines from stdin until it closes.
    private static func readControlLines(server: APNsMockServer) {
        for line in LineReader(FileHandle.standardInput) {
            let words = String(decoding: line, as: UTF8.self).split(separator: " ").map(String.init)
            switch words.first {
            case "set" where words.count == 3:
                var failed = false
                server.faults.update { faults in failed = !apply(words[1], words[2], to: &faults) }
                Output.line(failed ? "error: cannot set \(words[1]) to \(words[2])" : "ok")
            case "goaway":
                server.sendGoAway()
                Output.line("ok")
            case "drop":
                server.dropAllConnections()
                Output.line("ok")
            case "stats":
                Output.line(statsJSON(server))
            case "deliveries":
                for entry in server.recorder.entries where entry.status == 200 { Output.line(deliveryJSON(entry)) }
                Output.line("end")
            case nil:
                continue
            default:
                Output.line("error: unknown control line; use 'set <option> <value>', 'goaway', 'drop', 'stats' or 'deliveries'")
            }
        }
    }

    /// Applies one fault option; false when the name or value is invalid.
    static func apply(_ name: String, _ value: String, to faults: inout APNsMockFaults) -> Bool {
        guard let spec = faultOptions.first(where: { $0.key == name }), spec.problem(with: value) == nil else { return false }
        let number = Double(value) ?? 0
        let tokens = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        switch name {
        case "unregistered-tokens": faults.unregisteredTokens = tokens
        case "bad-tokens": faults.badTokens = tokens
        case "rate-429": faults.tooManyRequestsProbability = number
        case "rate-500": faults.internalServerErrorProbability = number
        case "rate-503": faults.serviceUnavailableProbability = number
        case "latency-ms": faults.latency = .milliseconds(number)
        case "jitter-ms": faults.latencyJitter = .milliseconds(number)
        case "goaway-after": faults.goAwayAfterStreams = number > 0 ? Int(number) : nil
        case "drop-rate": faults.dropConnectionProbability = number
        case "stall-rate": faults.stallProbability = number
        default: return false
        }
        return true
    }

    static func statsJSON(_ server: APNsMockServer) -> String {
        let counts = server.recorder.countsByOutcome
        let fields = counts.keys.sorted().map { "\(JSONText.quoted($0)):\(counts[$0]!)" }
        return "{\"total\":\(server.recorder.totalCount),\"connections\":\(server.acceptedConnections),\"outcomes\":{\(fields.joined(separator: ","))}}"
    }

    /// `{"collapse_id":…,"push_type":…,"apns_id":…,"key_id":…,"auth":…,"certificate":…}` of one delivered push
    /// (null where absent; `key_id` is the `kid` of its provider token, so tests can tell which key signed it;
    /// `auth` is `certificate` on a connection with a verified client certificate, whose SHA-256 fingerprint is
    /// `certificate`, else `token` with an `authorization` header, else `none`).
    static func deliveryJSON(_ entry: APNsMockRecorder.Entry) -> String {
        func header(_ name: String) -> String? { entry.headers.first { $0.name == name }?.value }
        func quoted(_ text: String?) -> String { text.map(JSONText.quoted) ?? "null" }
        let payload = String(decoding: entry.payload, as: UTF8.self)
        var pushType = "null"
        if let range = payload.range(of: "\"pushType\":") {
            pushType = String(payload[range.upperBound...].prefix { $0.isNumber })
        }
        let authorization = header("authorization")
        let auth = entry.clientCertificate != nil ? "certificate" : authorization != nil ? "token" : "none"
        return "{\"collapse_id\":\(quoted(header("apns-collapse-id"))),\"push_type\":\(pushType.isEmpty ? "null" : pushType),"
            + "\"apns_id\":\(quoted(header("apns-id"))),\"key_id\":\(quoted(authorization.flatMap(keyID(ofAuthorization:)))),"
            + "\"auth\":\"\(auth)\",\"certificate\":\(quoted(entry.clientCertificate?.sha256))}"
    }

    /// The `kid` of a `bearer <JWT>` authorization value's header, nil when it has none.
    static func keyID(ofAuthorization authorization: String) -> String? {
        guard authorization.hasPrefix("bearer "),
            let encoded = authorization.dropFirst("bearer ".count).split(separator: ".").first,
            let bytes = Base64URL.decode(encoded),
            let header = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        else { return nil }
        return header["kid"] as? String
    }

    /// The public key of a `.p8` private key file, or a public-key PEM file.
    static func publicKey(from path: String) -> ES256PublicKey? {
        if let privateKey = try? ES256PrivateKey(pemFile: path) { return privateKey.publicKey }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return try? ES256PublicKey(pem: text)
    }
}
