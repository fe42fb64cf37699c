import Foundation
import TestSupport
import Testing

/// SIGHUP through the real process: `callpush run --config` with an `apns.apps` file, between `callpush kafka-mock`
/// and `callpush mock-apns --apps` (which accepts the old and the new key), with call traffic flowing.
@Suite(.serialized) struct ReloadTests {
    /// The app's key is rotated in the file mid-traffic and SIGHUP sent: every event gets exactly one final receipt,
    /// the mock accepts no push twice, and pushes are signed by the old key before and the new one after. Then a
    /// file naming a missing key is refused: one log line, `result="failed"` counted, and the new key stays in force.
    @Test func sighupRotatesAKeyMidTrafficAndRefusesAnInvalidFile() async throws {
        let bed = try ScaleOutBed(
            partitions: 4, latencyMilliseconds: 300, extraWorkerArguments: ["--worker-max-in-flight", "100"],
            credentials: .appsFile)
        try bed.startWorker("a")
        #expect(await bed.waitUntilSettled(), "\(bed.logs)")
        let ok = "callpush_apns_config_reloads_total{result=\"ok\"}"
        let failed = "callpush_apns_config_reloads_total{result=\"failed\"}"

        // Calls every 0.1 s, 50 at a time; the key is rotated halfway.
        let inFlight = "callpush_apns_app_requests_in_flight{bundle_id=\"com.example.app\"}"
        for batch in 0..<20 {
            // Answers of the batch before the reload take 2 s, so they are surely in flight when SIGHUP comes.
            if batch == 9 { _ = bed.apns.control("set latency-ms 2000") }
            try bed.produceCalls(50, hangUpLag: 100)
            if batch == 9 {
                // More calls every 2 s until one is seen in flight (once in a few loaded runs none was for 90 s).
                var polls = 0
                let sending = await Eventually.waitUntil(timeout: .seconds(90), interval: .milliseconds(50)) {
                    if bed.metric("a", inFlight) ?? 0 > 0 { return true }
                    polls += 1
                    if polls % 40 == 0 { _ = try? bed.produceCalls(10, hangUpLag: 100) }
                    return false
                }
                #expect(sending, """
                    pushes are on the old key's connections when SIGHUP comes: \(bed.diagnostics("a", [
                        "in_flight", "inflight", "outcomes_total", "paused", "apns_connections", "consumed_total",
                    ]))
                    """)
                try bed.writeApps(rotated: true)
                bed.reload("a")
                _ = bed.apns.control("set latency-ms 300")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(await Eventually.waitUntil(timeout: .seconds(30), interval: .milliseconds(200)) { bed.metric("a", ok) == 1 }, "\(bed.logs)")
        try bed.produceRemainingHangUps()
        let rotation = try await bed.verdict()
        print("key rotation by SIGHUP: \(bed.producedCount) events: \(rotation)")
        #expect(rotation.lost == 0, "\(bed.logs)")
        #expect(rotation.duplicatePushes == 0)
        #expect(rotation.duplicateReceipts == 0)
        #expect(rotation.ringsAfterHangUp == 0)
        let deliveries = bed.deliveries()
        let byKey = Dictionary(grouping: deliveries, by: { $0.keyID ?? "none" }).mapValues(\.count)
        #expect(byKey[ScaleOutBed.keyID, default: 0] > 0 && byKey[ScaleOutBed.rotatedKeyID, default: 0] > 0, "\(byKey)")
        #expect(byKey.count == 2, "every push carries one of the two keys: \(byKey)")

        // A file whose key cannot be read is refused; the rotated key stays in force.
        try bed.writeConfig("""
            {"apns":{"apps":[{"bundle-id":"com.example.app","key-file":"/nonexistent/AuthKey_NEW.p8",\
            "key-id":"NEW0000KEY","team-id":"\(ScaleOutBed.teamID)"}]}}
            """)
        bed.reload("a")
        #expect(await Eventually.waitUntil(timeout: .seconds(30), interval: .milliseconds(200)) { bed.metric("a", failed) == 1 }, "\(bed.logs)")
        #expect(bed.metric("a", ok) == 1)
        let log = (try? String(contentsOfFile: bed.workers["a"]?.process.logPath ?? "", encoding: .utf8)) ?? ""
        let refusals = log.split(separator: "\n").filter { $0.contains("configuration reload refused") }
        #expect(refusals.count == 1, "\(log)")
        #expect(refusals.first?.contains("/nonexistent/AuthKey_NEW.p8") == true, "the line names the problem: \(refusals)")
        try bed.produceCalls(200, hangUps: false)
        let afterRefusal = try await bed.verdict()
        #expect(afterRefusal.lost == 0, "\(bed.logs)")
        #expect(afterRefusal.duplicatePushes == 0)
        let later = bed.deliveries().dropFirst(deliveries.count)
        #expect(later.count == 200)
        #expect(later.allSatisfy { $0.keyID == ScaleOutBed.rotatedKeyID }, "the refused file changed nothing")
        #expect(bed.stopWorker("a") == 0)
    }
}
