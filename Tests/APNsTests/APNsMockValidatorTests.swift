@testable import Telemetry
import TestSupport
@testable import APNs
@testable import APNsMock
@testable import Crypto
import Foundation
import Testing

@Suite struct APNsMockValidatorTests {
    static let token = String(repeating: "ab", count: 32)
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"

    let clock = ManualWallClock()
    let key: ES256PrivateKey
    let signer: JWTSigner
    let validator: APNsMockValidator

    init() throws {
        key = try ES256PrivateKey.generate()
        signer = JWTSigner(privateKey: key, keyID: Self.keyID, teamID: Self.teamID)
        validator = APNsMockValidator(
            configuration: APNsMockConfiguration(
                authentication: .providerToken(keys: [Self.keyID: key.publicKey], teamID: Self.teamID),
                allowedBundleIDs: ["com.example.app"],
                clock: clock
            )
        )
    }

    func jwt(issuedAt: Int64? = nil, signer: JWTSigner? = nil) throws -> String {
        try (signer ?? self.signer).makeToken(issuedAt: issuedAt ?? clock.now().wholeSeconds).jwt
    }

    /// A valid alert request with `changes` applied to its headers (nil value removes the header).
    func request(
        method: String = "POST",
        path: String? = nil,
        set changes: [String: String?] = [:],
        extra: [(name: String, value: String)] = [],
        body: [UInt8] = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
    ) throws -> APNsMockRequest {
        var headers: [String: String] = [
            "authorization": "bearer " + (try jwt()), "apns-push-type": "alert", "apns-topic": "com.example.app",
            "apns-priority": "10",
        ]
        for (name, value) in changes { headers[name] = value }
        let list = headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) } + extra
        return APNsMockRequest(method: method, path: path ?? "/3/device/\(Self.token)", headers: list, body: body)
    }

    func answer(_ request: APNsMockRequest, connection: APNsMockConnectionState = APNsMockConnectionState()) -> (Int, String?) {
        let response = validator.handle(request, connection: connection).response
        return (response?.status ?? -1, response?.reason)
    }

    @Test func validAlertAndVoipPushesSucceed() throws {
        let decision = validator.handle(try request(set: ["apns-id": "8d7f0a52-3c1e-4b6a-9f00-123456789abc"]), connection: .init())
        let response = try #require(decision.response)
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.apnsID == "8d7f0a52-3c1e-4b6a-9f00-123456789abc")  // echoed exactly as sent, like APNs
        #expect(response.header("apns-unique-id") != nil)
        #expect(!decision.sendGoAwayAfter)
        let voip = try request(set: ["apns-push-type": "voip", "apns-topic": "com.example.app.voip"], body: Array(repeating: 0x20, count: 5000) + Array("{}".utf8))
        #expect(answer(voip).0 == 200)
        // A generated apns-id when the request has none, parsed by the client side into a lowercase UUID.
        let generated = try #require(validator.handle(try request(), connection: .init()).response)
        let result = APNsResult(status: generated.status, headers: generated.headers.map { ($0.name, $0.value) }, body: generated.body)
        #expect(result.disposition == .delivered)
        #expect(result.apnsID == generated.apnsID?.lowercased())
        #expect(result.apnsID != nil)
    }

    /// APNs echoes `apns-id` as sent, in whatever case, on success and on rejection; only a request without one gets
    /// a generated id (uppercase). aioapns matches the echo byte for byte.
    @Test func apnsIDIsEchoedExactlyAsSent() throws {
        for sent in ["8d7f0a52-3c1e-4b6a-9f00-123456789abc", "8D7F0A52-3C1E-4B6A-9F00-123456789ABC",
                     "8d7f0a52-3C1E-4b6a-9F00-123456789aBc"] {
            #expect(validator.handle(try request(set: ["apns-id": sent]), connection: .init()).response?.apnsID == sent)
            let rejected = validator.handle(try request(set: ["apns-id": sent, "apns-topic": nil]), connection: .init())
            #expect(rejected.response?.status == 400)
            #expect(rejected.response?.apnsID == sent)
        }
        var generated = Set<String>()
        for _ in 0..<1000 {
            let id = try #require(validator.handle(try request(), connection: .init()).response?.apnsID)
            #expect(id == id.uppercased() && UUID(uuidString: id) != nil, "\(id)")
            #expect(Array(id.utf8)[14] == UInt8(ascii: "4"), "version 4: \(id)")
            generated.insert(id)
        }
        #expect(generated.count == 1000)
        // A malformed id is rejected and answered with a generated one.
        let bad = try #require(validator.handle(try request(set: ["apns-id": "8d7f0a52"]), connection: .init()).response)
        #expect(bad.reason == APNsReason.badMessageId.rawValue)
        #expect(bad.apnsID != "8d7f0a52" && UUID(uuidString: bad.apnsID ?? "") != nil)
    }

    /// The payload must be one JSON object: the byte-level check agrees with JSONSerialization on these.
    @Test(arguments: [
        #"{}"#, #" {"aps":{}} "#, #"{"aps":{"alert":{"title":"Alice","body":"Incoming call"}},"n":-1.5e+3,"z":0}"#,
        #"{"a":[1,2.0,-0.5,true,false,null,"x",{"b":[]}]}"#, #"{"esc":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"}"#,
        "{\"utf8\":\"Al\u{00E9}e \u{1F4DE}\"}", "\n\t{\"a\":1}\r\n",
        #"[]"#, #"{"a":1"#, #"{"a" 1}"#, #"{a:1}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":-}"#,
        #"{"a":1e}"#, #"{"a":tru}"#, #"{"a":"\x"}"#, #"{"a":"\u12G4"}"#, "{\"a\":\"tab\there\"}", #"{} {}"#,
        #"{"a":1}x"#, #""text""#, #"{"a":[1 2]}"#, #"{"a":1,,"b":2}"#, #"{,}"#, #"{"a":nul}"#,
    ])
    func payloadMustBeAJSONObject(_ payload: String) throws {
        let expected = (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) is [String: Any]
        #expect(answer(try request(body: Array(payload.utf8))).0 == (expected ? 200 : 400), "\(payload)")
    }

    @Test func payloadWithInvalidUTF8OrTooDeepIsRejected() throws {
        for bytes: [UInt8] in [[0xC3, 0x28], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF]] {
            let body = Array(#"{"a":""#.utf8) + bytes + Array(#""}"#.utf8)
            #expect(answer(try request(body: body)).1 == APNsReason.payloadEmpty.rawValue, "\(bytes)")
        }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(answer(try request(body: Array(#"{"a":\#(deep)}"#.utf8))).0 == 400)
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(answer(try request(body: Array(#"{"a":\#(fine)}"#.utf8))).0 == 200)
    }

    /// `mock-apns` without a key: a request without a provider token is refused as APNs does; a well-formed ES256
    /// token (any key, since there is none to check against) is accepted, and its age rules still apply.
    @Test func withoutAKeyTokensAreRequiredButNotVerified() throws {
        let unverified = APNsMockValidator(configuration: APNsMockConfiguration(
            authentication: .unverifiedProviderToken, allowedBundleIDs: ["com.example.app"], clock: clock))
        func answer(_ request: APNsMockRequest) -> (Int?, String?) {
            let response = unverified.handle(request, connection: .init()).response
            return (response?.status, response?.reason)
        }
        #expect(answer(try request(set: ["authorization": nil])) == (403, APNsReason.missingProviderToken.rawValue))
        #expect(answer(try request(set: ["authorization": ""])) == (403, APNsReason.missingProviderToken.rawValue))
        #expect(answer(try request(set: ["authorization": "bearer a.b.c"])) == (403, APNsReason.invalidProviderToken.rawValue))
        let anyKey = JWTSigner(privateKey: try ES256PrivateKey.generate(), keyID: "ANYKEY1234", teamID: "ANYTEAM123")
        #expect(answer(try request(set: ["authorization": "bearer " + (try jwt(signer: anyKey))])) == (200, nil))
        let old = try jwt(issuedAt: clock.now().wholeSeconds - 3660, signer: anyKey)
        #expect(answer(try request(set: ["authorization": "bearer " + old])) == (403, APNsReason.expiredProviderToken.rawValue))
        // The open mode accepts anything.
        let open = APNsMockValidator(configuration: APNsMockConfiguration(authentication: .acceptAnyToken, clock: clock))
        #expect(open.handle(try request(set: ["authorization": nil]), connection: .init()).response?.status == 200)
    }

    /// A verified token is not re-verified on the connection, but a different value on the same connection is
    /// verified before it counts.
    @Test func verifiedTokenIsCachedPerConnectionOnly() throws {
        let connection = APNsMockConnectionState(id: 1)
        let token = try jwt()
        #expect(answer(try request(set: ["authorization": "bearer " + token]), connection: connection).0 == 200)
        var tampered = token
        tampered.removeLast(2)
        tampered += token.hasSuffix("AA") ? "BB" : "AA"
        #expect(answer(try request(set: ["authorization": "bearer " + tampered]), connection: connection).1
            == APNsReason.invalidProviderToken.rawValue)
        #expect(answer(try request(set: ["authorization": "bearer " + token]), connection: connection).0 == 200)
        #expect(connection.tokenUpdateCount == 0)
    }

    @Test func rejectionsTable() throws {
        let long = String(repeating: "x", count: 65)
        let cases: [(String, APNsMockRequest, Int, APNsReason)] = [
            ("GET", try request(method: "GET"), 405, .methodNotAllowed),
            ("bad path", try request(path: "/2/device/\(Self.token)"), 404, .badPath),
            ("no token", try request(path: "/3/device/"), 400, .missingDeviceToken),
            ("token not hex", try request(path: "/3/device/zz" + String(Self.token.dropFirst(2))), 400, .badDeviceToken),
            ("token odd length", try request(path: "/3/device/abc"), 400, .badDeviceToken),
            ("duplicate", try request(extra: [("apns-topic", "com.example.app")]), 400, .duplicateHeaders),
            ("duplicate, other case", try request(extra: [("APNS-Priority", "10")]), 400, .duplicateHeaders),
            ("no topic", try request(set: ["apns-topic": nil]), 400, .missingTopic),
            ("malformed topic", try request(set: ["apns-topic": "com example"]), 400, .badTopic),
            ("other app", try request(set: ["apns-topic": "com.other.app"]), 400, .topicDisallowed),
            ("unknown push type", try request(set: ["apns-push-type": "fax"]), 400, .invalidPushType),
            ("voip on bundle topic", try request(set: ["apns-push-type": "voip"]), 400, .deviceTokenNotForTopic),
            ("alert on voip topic", try request(set: ["apns-topic": "com.example.app.voip"]), 400, .deviceTokenNotForTopic),
            ("priority 7", try request(set: ["apns-priority": "7"]), 400, .badPriority),
            ("priority text", try request(set: ["apns-priority": "high"]), 400, .badPriority),
            ("background with 10", try request(set: ["apns-push-type": "background"]), 400, .badPriority),
            ("background default 10", try request(set: ["apns-push-type": "background", "apns-priority": nil]), 400, .badPriority),
            ("expiration text", try request(set: ["apns-expiration": "tomorrow"]), 400, .badExpirationDate),
            ("expiration negative", try request(set: ["apns-expiration": "-1"]), 400, .badExpirationDate),
            ("collapse id 65 bytes", try request(set: ["apns-collapse-id": long]), 400, .badCollapseId),
            ("apns-id not a uuid", try request(set: ["apns-id": "123"]), 400, .badMessageId),
            ("empty body", try request(body: []), 400, .payloadEmpty),
            ("bad json", try request(body: Array("{\"aps\":".utf8)), 400, .payloadEmpty),
            ("json array", try request(body: Array("[1]".utf8)), 400, .payloadEmpty),
            ("4097 bytes alert", try request(body: Array("{}".utf8) + Array(repeating: 0x20, count: 4095)), 413, .payloadTooLarge),
            ("5121 bytes voip", try request(set: ["apns-push-type": "voip", "apns-topic": "com.example.app.voip"], body: Array("{}".utf8) + Array(repeating: 0x20, count: 5119)), 413, .payloadTooLarge),
            ("no authorization", try request(set: ["authorization": nil]), 403, .missingProviderToken),
            ("not bearer", try request(set: ["authorization": "basic abc"]), 403, .invalidProviderToken),
            ("garbage jwt", try request(set: ["authorization": "bearer a.b.c"]), 403, .invalidProviderToken),
        ]
        for (name, request, status, reason) in cases {
            let (gotStatus, gotReason) = answer(request)
            #expect(gotStatus == status, "\(name)")
            #expect(gotReason == reason.rawValue, "\(name)")
            // The client-side classification agrees with the mock's reason.
            let response = try #require(validator.handle(request, connection: .init()).response)
            let result = APNsResult(status: response.status, headers: response.headers.map { ($0.name, $0.value) }, body: response.body)
            #expect(result.reason == reason.rawValue, "\(name)")
        }
        #expect(validator.recorder.count("PayloadTooLarge") == 4)
    }

    @Test func providerTokenRules() throws {
        let otherKey = try ES256PrivateKey.generate()
        let wrongKey = JWTSigner(privateKey: otherKey, keyID: Self.keyID, teamID: Self.teamID)
        let unknownKid = JWTSigner(privateKey: key, keyID: "ZZZZZZZZZZ", teamID: Self.teamID)
        let wrongTeam = JWTSigner(privateKey: key, keyID: Self.keyID, teamID: "WRONGTEAM1")
        let now = clock.now().wholeSeconds
        // Change one character inside the signature (not its last one, whose low bits a decoder may ignore).
        var tampered = Array(try jwt())
        let inside = tampered.count - 10
        tampered[inside] = tampered[inside] == "A" ? "B" : "A"
        let header = Base64URL.encode(#"{"alg":"HS256","kid":"ABC123DEFG"}"#)
        let claims = Base64URL.encode(#"{"iss":"DEF123GHIJ","iat":\#(now)}"#)
        let signature = try key.signature(for: Array("\(header).\(claims)".utf8))
        let hs256 = "\(header).\(claims).\(Base64URL.encode(signature))"
        let cases: [(String, String, Int, APNsReason)] = [
            ("signed by another key", try jwt(signer: wrongKey), 403, .invalidProviderToken),
            ("unknown kid", try jwt(signer: unknownKid), 403, .invalidProviderToken),
            ("wrong team", try jwt(signer: wrongTeam), 403, .invalidProviderToken),
            ("tampered signature", String(tampered), 403, .invalidProviderToken),
            ("not ES256", hs256, 403, .invalidProviderToken),
            ("from the future", try jwt(issuedAt: now + 3600), 403, .invalidProviderToken),
            ("61 minutes old", try jwt(issuedAt: now - 3660), 403, .expiredProviderToken),
            ("59 minutes old", try jwt(issuedAt: now - 3540), 200, .init("")),
        ]
        for (name, token, status, reason) in cases {
            let (gotStatus, gotReason) = answer(try request(set: ["authorization": "bearer " + token]))
            #expect(gotStatus == status, "\(name)")
            if status != 200 { #expect(gotReason == reason.rawValue, "\(name)") }
        }
        // DER signatures are accepted too, as APNs does.
        let der = try key.derSignature(for: Array("\(Base64URL.encode(#"{"alg":"ES256","kid":"ABC123DEFG"}"#)).\(claims)".utf8))
        let derToken = "\(Base64URL.encode(#"{"alg":"ES256","kid":"ABC123DEFG"}"#)).\(claims).\(Base64URL.encode(der))"
        #expect(answer(try request(set: ["authorization": "bearer " + derToken])).0 == 200)
    }

    @Test func tooManyProviderTokenUpdatesIsPerConnection() throws {
        let connection = APNsMockConnectionState(id: 1)
        let first = try jwt()
        #expect(answer(try request(set: ["authorization": "bearer " + first]), connection: connection).0 == 200)
        clock.advance(by: .seconds(5 * 60))
        let second = try jwt()
        #expect(second != first)
        let (status, reason) = answer(try request(set: ["authorization": "bearer " + second]), connection: connection)
        #expect(status == 429)
        #expect(reason == APNsReason.tooManyProviderTokenUpdates.rawValue)
        // The old token still works on that connection, and the new token works on a fresh connection.
        #expect(answer(try request(set: ["authorization": "bearer " + first]), connection: connection).0 == 200)
        #expect(answer(try request(set: ["authorization": "bearer " + second]), connection: APNsMockConnectionState(id: 2)).0 == 200)
        // 20 minutes after the first token, the switch is accepted.
        clock.advance(by: .seconds(15 * 60))
        #expect(answer(try request(set: ["authorization": "bearer " + second]), connection: connection).0 == 200)
        #expect(connection.tokenUpdateCount == 1)
        // Another key ID on the same connection is unrelated.
        let otherKey = try ES256PrivateKey.generate()
        let twoKeys = APNsMockValidator(
            configuration: APNsMockConfiguration(
                authentication: .providerToken(keys: [Self.keyID: key.publicKey, "KEY2KEY2KE": otherKey.publicKey], teamID: Self.teamID),
                clock: clock
            )
        )
        let bound = APNsMockConnectionState()
        #expect(twoKeys.handle(try request(), connection: bound).response?.status == 200)
        let other = try JWTSigner(privateKey: otherKey, keyID: "KEY2KEY2KE", teamID: Self.teamID).makeToken(issuedAt: clock.now().wholeSeconds)
        let answer = twoKeys.handle(try request(set: ["authorization": other.authorizationValue]), connection: bound).response
        #expect(answer?.status == 403)
        #expect(answer?.reason == APNsReason.unrelatedKeyIdInToken.rawValue)
        #expect(bound.boundKeyID == Self.keyID)
    }

    @Test func certificateModeIgnoresAuthorizationAndDefaultsTopic() throws {
        let certificate = APNsMockValidator(configuration: APNsMockConfiguration(allowedBundleIDs: ["com.example.app"], clock: clock))
        let response = certificate.handle(try request(set: ["authorization": nil, "apns-topic": nil]), connection: .init()).response
        #expect(response?.status == 200)
    }

    /// Token and certificate apps on one mock: a connection whose handshake verified a registered client certificate
    /// is certificate auth for that app's bundle id only (`authorization` ignored; its topic is the default), so
    /// another app's topic is `400 TopicDisallowed` and a certificate no app has `403 BadCertificate`; a connection
    /// without a certificate is token auth exactly as before.
    @Test func aVerifiedClientCertificatePushesOnlyToItsOwnApp() throws {
        let enterprise = try CertificateFingerprint(
            pem: SelfSignedCertificate.generate(commonName: "Apple Push Services: com.example.enterprise").certificatePEM)
        let unknown = try CertificateFingerprint(pem: SelfSignedCertificate.generate().certificatePEM)
        var configuration = APNsMockConfiguration(
            authentication: .providerToken(keys: [Self.keyID: key.publicKey], teamID: Self.teamID),
            allowedBundleIDs: ["com.example.app", "com.example.enterprise"], clock: clock)
        configuration.clientCertificates = [enterprise: ["com.example.enterprise"]]
        let mixed = APNsMockValidator(configuration: configuration)
        func answer(_ request: APNsMockRequest, certificate: CertificateFingerprint?) -> (Int, String?) {
            let response = mixed.handle(request, connection: APNsMockConnectionState(clientCertificate: certificate)).response
            return (response?.status ?? -1, response?.reason)
        }
        let toEnterprise = try request(set: ["authorization": nil, "apns-topic": "com.example.enterprise"])
        #expect(answer(toEnterprise, certificate: enterprise) == (200, nil))
        #expect(answer(try request(set: ["authorization": nil, "apns-topic": nil]), certificate: enterprise) == (200, nil))
        let voip = try request(set: ["authorization": nil, "apns-push-type": "voip", "apns-topic": "com.example.enterprise.voip"])
        #expect(answer(voip, certificate: enterprise) == (200, nil))
        #expect(mixed.recorder.entries.allSatisfy { $0.clientCertificate == enterprise })

        // The token app's topic, with or without that team's valid token: a certificate covers its own app.
        #expect(answer(try request(set: ["authorization": nil]), certificate: enterprise) == (400, "TopicDisallowed"))
        #expect(answer(try request(), certificate: enterprise) == (400, "TopicDisallowed"))
        #expect(answer(toEnterprise, certificate: unknown) == (403, "BadCertificate"))

        // Without a certificate: the token rules, as before.
        #expect(answer(try request(), certificate: nil) == (200, nil))
        #expect(answer(toEnterprise, certificate: nil) == (403, "MissingProviderToken"))
        #expect(mixed.recorder.entries.last?.clientCertificate == nil)
    }

    @Test func faultsWithFixedSeedAreReproducible() throws {
        func run(seed: UInt64) throws -> [String] {
            let injector = APNsMockFaultInjector(
                faults: APNsMockFaults(
                    tooManyRequestsProbability: 0.1, internalServerErrorProbability: 0.1,
                    serviceUnavailableProbability: 0.1, latency: .milliseconds(10), latencyJitter: .milliseconds(20),
                    dropConnectionProbability: 0.05, stallProbability: 0.05
                ),
                seed: seed
            )
            let mock = APNsMockValidator(configuration: APNsMockConfiguration(clock: clock), faults: injector)
            let connection = APNsMockConnectionState()
            var outcomes: [String] = []
            for _ in 0..<400 {
                let decision = mock.handle(try request(set: ["authorization": nil]), connection: connection)
                #expect(decision.delay >= .milliseconds(10) && decision.delay <= .milliseconds(30))
                switch decision.action {
                case .respond(let response): outcomes.append(response.reason ?? "Success")
                case .stall: outcomes.append("Stalled")
                case .dropConnection: outcomes.append("Dropped")
                }
            }
            let counts = mock.recorder.countsByOutcome
            #expect(counts.values.reduce(0, +) == 400)
            #expect(mock.recorder.totalCount == 400)
            return outcomes
        }
        let first = try run(seed: 42)
        #expect(try run(seed: 42) == first)
        #expect(try run(seed: 43) != first)
        let counts = Dictionary(grouping: first, by: { $0 }).mapValues(\.count)
        for outcome in ["TooManyRequests", "InternalServerError", "ServiceUnavailable"] {
            #expect((20...70).contains(counts[outcome, default: 0]), "\(outcome): \(counts)")
        }
        for outcome in ["Stalled", "Dropped"] { #expect((5...40).contains(counts[outcome, default: 0]), "\(outcome): \(counts)") }
        #expect((200...320).contains(counts["Success", default: 0]), "\(counts)")
    }

    @Test func tokenFaultsAndGoAway() throws {
        let dead = String(repeating: "cd", count: 32)
        let bad = String(repeating: "ef", count: 32)
        let injector = APNsMockFaultInjector()
        let mock = APNsMockValidator(configuration: APNsMockConfiguration(clock: clock), faults: injector)
        injector.faults = APNsMockFaults(unregisteredTokens: [dead.uppercased()], badTokens: [bad], goAwayAfterStreams: 3)
        let connection = APNsMockConnectionState()
        let unregistered = try #require(mock.handle(try request(path: "/3/device/\(dead)", set: ["authorization": nil]), connection: connection).response)
        let result = APNsResult(status: unregistered.status, headers: unregistered.headers.map { ($0.name, $0.value) }, body: unregistered.body)
        #expect(result.status == 410)
        #expect(result.disposition == .tokenInvalid)
        #expect(result.timestampMilliseconds == clock.now().milliseconds)
        let badAnswer = mock.handle(try request(path: "/3/device/\(bad)", set: ["authorization": nil]), connection: connection)
        #expect(badAnswer.response?.reason == "BadDeviceToken")
        #expect(!badAnswer.sendGoAwayAfter)
        let third = mock.handle(try request(set: ["authorization": nil]), connection: connection)
        #expect(third.response?.status == 200)
        #expect(third.sendGoAwayAfter)
        #expect(String(decoding: third.goAwayDebugData, as: UTF8.self) == #"{"reason":"Shutdown"}"#)
        #expect(!mock.handle(try request(set: ["authorization": nil]), connection: connection).sendGoAwayAfter)
        #expect(connection.streamCount == 4)
        // Changing the plan at run time.
        injector.update { $0.unregisteredTokens = [] }
        #expect(mock.handle(try request(path: "/3/device/\(dead)", set: ["authorization": nil]), connection: .init()).response?.status == 200)
        let entries = mock.recorder.entries
        #expect(entries.count == 5)
        #expect(entries[0].outcome == "Unregistered" && entries[0].status == 410)
        #expect(entries[0].path == "/3/device/\(dead)")
        #expect(String(decoding: entries[0].payload, as: UTF8.self).contains("aps"))
        #expect(mock.recorder.count("Success") == 3)
    }

    @Test func recorderIsBounded() throws {
        let recorder = APNsMockRecorder(capacity: 3)
        let mock = APNsMockValidator(configuration: APNsMockConfiguration(clock: clock), recorder: recorder)
        for index in 0..<10 { _ = mock.handle(try request(set: ["authorization": nil]), connection: .init(id: index)) }
        #expect(recorder.entries.map(\.connectionID) == [7, 8, 9], "the most recent, oldest first")
        #expect(recorder.totalCount == 10)
        recorder.reset()
        #expect(recorder.totalCount == 0)
    }
}
