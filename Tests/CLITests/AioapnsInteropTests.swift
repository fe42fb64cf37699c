import Foundation
import TestSupport
import Testing

/// aioapns (PyPI's asyncio APNs client, unmodified; `make test-deps` installs it) pushing through `callpush mock-apns`
/// with a real .p8 key: an independent client must work against the mock. It matches each answer to its request by
/// the echoed `apns-id`, byte for byte, so an echo in another case than sent makes every push time out.
@Suite(.serialized) struct AioapnsInteropTests {
    static let script = PackageRoot.url.appendingPathComponent("scripts/aioapns-push.py").path
    /// A python3 with aioapns (the venv `make test-deps` makes, where Debian's Python refuses pip).
    static let python = PythonInterpreter.path(importing: ["aioapns"])

    /// Runs the driver script against `bed`'s mock; returns its JSON summary.
    func push(_ bed: APNsCommandTests.Bed, count: Int, extra: [String] = [], keyID: String = APNsCommandTests.keyID)
        throws -> [String: Any]
    {
        let result = try ChildProcess.run(
            [Self.python, Self.script, "--endpoint", bed.address, "--ca-file", bed.ca, "--key-file", bed.key,
             "--key-id", keyID, "--team-id", APNsCommandTests.teamID, "--count", String(count), "--concurrency", "20",
             "--connections", "2", "--timeout", "5"] + extra,
            timeoutSeconds: 120)
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(result.output)")
    }

    @Test func everyPushIsAcceptedWithLowerAndUppercaseIDs() throws {
        let bed = try APNsCommandTests.Bed()
        let lower = try push(bed, count: 300)
        #expect(lower["statuses"] as? [String: Int] == ["200": 300], "\(lower)")
        let upper = try push(bed, count: 50, extra: ["--uppercase-ids"])
        #expect(upper["statuses"] as? [String: Int] == ["200": 50], "\(upper)")
    }

    @Test func aTokenFromAnUnknownKeyIsRefused() throws {
        let bed = try APNsCommandTests.Bed()
        let refused = try push(bed, count: 3, keyID: "ZZZZZZZZZZ")
        #expect(refused["statuses"] as? [String: Int] == ["403": 3], "\(refused)")
        #expect(refused["reasons"] as? [String: Int] == ["InvalidProviderToken": 3], "\(refused)")
    }
}
