import APNs
import Foundation
import Worker

/// `callpush send`: one push to one device, like the "pusher" desktop tools, with a hint for every failure.
struct SendCommand: Command {
    let name = "send"
    let summary = "send one push to one device and explain APNs' answer"
    let usage = """
        Usage: callpush send --token HEX --topic BUNDLE_ID (--incoming | --hangup | --voip | --payload FILE) \\
                             (--key-file P8 --key-id KID --team-id TEAM | --certificate PEM --private-key PEM |
                              --pkcs12 P12) [options]

        Builds the push with the same mapping the worker uses (--incoming rings, --hangup stops the ringing,
        --voip sends a PushKit call push to the .voip topic), or sends a raw JSON payload from a file (- for stdin).
        Prints APNs' status, reason, apns-id and apns-unique-id, and for every failure a plain-language hint.
        Exit status: 0 delivered, 2 rejected by APNs, 3 no answer (connection, TLS or timeout), 64 bad usage.
        """
    let examples = [
        "callpush send --token $TOKEN --topic com.example.app --incoming --caller-name Alice \\\n"
            + "      --key-file AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ --environment sandbox",
        "echo '{\"aps\":{\"alert\":\"hi\"}}' | callpush send --token $TOKEN --topic com.example.app --payload - \\\n"
            + "      --certificate cert.pem --private-key key.pem",
    ]
    var options: [OptionSpec] {
        [
            OptionSpec("token", .string, "device token (hex); a VoIP token with --voip"),
            OptionSpec("topic", .string, "the app's bundle id (.voip is added for --voip)"),
            OptionSpec("environment", .choice(["sandbox", "production"]), default: "sandbox", "APNs environment of the token"),
            OptionSpec("incoming", .boolean, "preset: an incoming-call alert that makes the phone ring"),
            OptionSpec("hangup", .boolean, "preset: the hang-up alert that stops the ringing"),
            OptionSpec("voip", .boolean, "preset: a VoIP (PushKit/CallKit) incoming-call push"),
            OptionSpec("payload", .string, "raw JSON payload file, - for stdin (instead of a preset)"),
            OptionSpec("push-type", .choice(APNsPushType.all.map(\.rawValue)), default: "alert", "apns-push-type of a raw payload"),
            OptionSpec("priority", .choice(["10", "5", "1"]), "apns-priority of a raw payload (default: 10, 5 for background)"),
            OptionSpec("expiration", .integer(0...Int(Int32.max)), "apns-expiration of a raw payload, UNIX seconds (0: deliver once)"),
            OptionSpec("collapse-id", .string, "apns-collapse-id of a raw payload"),
            OptionSpec("call-id", .string, "presets: the call id (default: a new one)"),
            OptionSpec("caller-name", .string, default: "callpush", "presets: the caller shown"),
            OptionSpec("ring-timeout", .integer(1...600), default: "30", "presets: seconds the call rings"),
            OptionSpec("timeout", .number(1...120), default: "10", "seconds to wait for APNs"),
            OptionSpec("apps", .string, "the apps file of 'callpush run' (apns.apps): use the credentials of the app of --topic"),
        ] + APNsOptions(prefix: "").specs
    }

    func run(_ options: ParsedOptions) async -> Int32 {
        let apnsOptions = APNsOptions(prefix: "")
        var problems: [String] = []
        var credentials: APNsCredentials?
        switch options.string("apps").map({ Self.appCredentials($0, topic: options.string("topic") ?? "") })
            ?? apnsOptions.credentials(options)
        {
        case .success(let value): credentials = value
        case .failure(let failure): problems += failure.problems
        }
        let endpoint: APNsEndpoint?
        switch apnsOptions.customEndpoint(options) {
        case .success(let value): endpoint = value
        case .failure(let failure): endpoint = nil; problems += failure.problems
        }
        let request = buildRequest(options, problems: &problems)
        guard problems.isEmpty, let credentials, let request else {
            for problem in problems { CommandLineTool.printError(problem) }
            CommandLineTool.printError("see 'callpush send --help'")
            return ExitStatus.usage
        }
        let environment: APNsEnvironment = options.string("environment") == "production" ? .production : .sandbox
        var configuration = APNsClientConfiguration(credentials: credentials, customEndpoint: endpoint, connectionsPerPool: 1)
        configuration.requestTimeout = .milliseconds(Int(options.defaultedNumber("timeout") * 1000))
        configuration.connectTimeout = configuration.requestTimeout
        let client: APNsClient
        do {
            client = try APNsClient(configuration: configuration)
        } catch {
            CommandLineTool.printError("\(error)")
            return ExitStatus.usage
        }
        let result = await client.send(request, environment: environment)
        let status = client.poolStatus(for: environment)
        client.shutdown()
        return report(result, request: request, endpoint: configuration.endpoint(for: environment), connectError: status.lastConnectError)
    }

    private func buildRequest(_ options: ParsedOptions, problems: inout [String]) -> APNsRequest? {
        guard let tokenText = options.string("token") else {
            problems.append("--token is required")
            return nil
        }
        guard let topic = options.string("topic") else {
            problems.append("--topic is required (the app's bundle id)")
            return nil
        }
        let token: DeviceToken
        do { token = try DeviceToken(tokenText) } catch {
            problems.append("--token: \(error.message)")
            return nil
        }
        let presets = ["incoming", "hangup", "voip"].filter { options.boolean($0) } + (options.has("payload") ? ["payload"] : [])
        guard presets.count == 1 else {
            problems.append(presets.isEmpty ? "choose what to send: --incoming, --hangup, --voip or --payload FILE"
                                            : "choose only one of --incoming, --hangup, --voip and --payload")
            return nil
        }
        do {
            if let path = options.string("payload") { return try rawRequest(path: path, token: token, topic: topic, options) }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let event = try CallEvent(
                eventID: UUID().uuidString.lowercased(),
                type: options.boolean("hangup") ? .hangup : .incoming,
                callID: options.string("call-id") ?? "call-\(UUID().uuidString.prefix(8).lowercased())",
                deviceToken: token, push: options.boolean("voip") ? .voip : .alert, topic: topic,
                environment: options.string("environment") == "production" ? .production : .sandbox,
                createdAtMilliseconds: now, ringTimeoutSeconds: options.defaultedInteger("ring-timeout"),
                caller: .init(name: options.defaulted("caller-name"))
            )
            return try PushMapper().map(event)
        } catch let error as EventDecodingError {
            problems.append(error.message)
        } catch let error as PushMappingError {
            problems.append(error.message)
        } catch let error as APNsRequestError {
            problems.append("\(error.message)\(error.code == .payloadTooLarge ? " (APNs would answer 413 PayloadTooLarge)" : "")")
        } catch {
            problems.append("\(error)")
        }
        return nil
    }

    private func rawRequest(path: String, token: DeviceToken, topic: String, _ options: ParsedOptions) throws -> APNsRequest {
        let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: path)
        guard let data else { throw SendProblem("cannot read \(path)") }
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw SendProblem("the payload in \(path) is not a JSON object")
        }
        let pushType = APNsPushType(rawValue: options.defaulted("push-type"))
        let priority = options.integer("priority").flatMap(APNsPriority.init(rawValue:))
            ?? (pushType == .background ? .conservePower : .immediate)
        let expiration: APNsExpiration = options.integer("expiration").map {
            $0 == 0 ? .immediately : .at(secondsSinceEpoch: Int64($0))
        } ?? .none
        return try APNsRequest(
            deviceToken: token, pushType: pushType, topic: pushType.topic(forBundleID: topic), payload: Array(data),
            priority: priority, expiration: expiration, collapseID: options.string("collapse-id"),
            apnsID: APNsID(UUID().uuidString)
        )
    }

    private func report(_ result: APNsResult, request: APNsRequest, endpoint: APNsEndpoint, connectError: String?) -> Int32 {
        Output.line("endpoint:       \(endpoint)")
        Output.line("device token:   \(request.deviceToken.masked)")
        Output.line("topic:          \(request.topic) (\(request.pushType))")
        Output.line("status:         \(result.status.map(String.init) ?? "no answer")")
        if let reason = result.reason { Output.line("reason:         \(reason)") }
        if let id = result.apnsID { Output.line("apns-id:        \(id)") }
        if let id = result.apnsUniqueID { Output.line("apns-unique-id: \(id)") }
        if let timestamp = result.timestampMilliseconds {
            let date = Date(timeIntervalSince1970: Double(timestamp) / 1000)
            Output.line("invalid since:  \(ISO8601DateFormatter().string(from: date))")
        }
        guard result.disposition != .delivered else {
            Output.line("result:         delivered")
            return ExitStatus.success
        }
        if result.status == nil, let connectError {
            Output.line("connection:     \(connectError)")
        }
        if let reason = result.apnsReason {
            Output.line("hint:           \(reason.hint(request: request, endpoint: endpoint))")
        }
        return result.status == nil ? ExitStatus.unreachable : ExitStatus.rejected
    }

    /// The credentials of the app in the apps file at `path` whose bundle id `topic` is (a push type's suffix such
    /// as `.voip` removed).
    static func appCredentials(_ path: String, topic: String) -> Result<APNsCredentials, OptionParser.Failure> {
        switch APNsAppsFile.read(path) {
        case .failure(let failure):
            return .failure(failure)
        case .success(let entries):
            let bundleID = APNsPushType.all.compactMap(\.topicSuffix).filter { !$0.isEmpty && topic.hasSuffix($0) }
                .max { $0.count < $1.count }.map { String(topic.dropLast($0.count)) } ?? topic
            guard let app = entries?.first(where: { $0.app.bundleID == bundleID }) else {
                return .failure(.init(problems: ["no app for bundle id '\(bundleID)' in \(path)"]))
            }
            return .success(app.app.credentials)
        }
    }
}
