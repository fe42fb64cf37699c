import APNsMock
import Foundation
public import Kafka
import Synchronization
import Telemetry

/// Produces synthetic call traffic to the calls topic at a steady rate: incoming calls, some hang-ups a moment
/// later, some to dead device tokens, some malformed, some already expired, alert and VoIP, production and sandbox.
public final class CallTrafficGenerator: Sendable {
    let mix: CallTrafficMix
    public let topic: String
    public let bundleID: String
    private let producer: KafkaProducer
    private let counts = Mutex<(produced: Int, failed: Int)>((0, 0))
    private let finished = Atomic<Bool>(false)

    /// Device tokens that ``deadTokens`` holds; configure the mock APNs to answer 410 for them.
    public static let deadTokens: Set<String> = Set((0..<16).map { String(format: "dead%060x", $0) })

    public init(producer: KafkaProducer, topic: String = "calls", bundleID: String, mix: CallTrafficMix = .init()) {
        self.producer = producer
        self.topic = topic
        self.bundleID = bundleID
        self.mix = mix
    }

    /// Events acknowledged by Kafka, and events whose produce failed.
    public var produced: (succeeded: Int, failed: Int) { counts.withLock { ($0.produced, $0.failed) } }

    /// True once ``run(rate:count:duration:seed:)`` has produced everything and received every delivery report.
    public var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Produces about `rate` calls per second until `count` events were produced or `duration` passed
    /// (whichever comes first), then waits for every delivery report.
    /// - Returns: the number of events acknowledged.
    public func run(rate: Double, count: Int?, duration: Duration, seed: UInt64 = 42) async -> Int {
        var random = APNsMockRandom(seed: seed)
        var pendingHangUps = DueQueue<(hangUp: (Int64) -> String, callID: String)>()
        let start = ContinuousClock.now
        let end = start + duration
        var emitted = 0
        var callNumber = 0
        let limit = count ?? Int.max
        while true {
            let now = ContinuousClock.now
            while emitted < limit, let due = pendingHangUps.popDue(at: now) {
                await produce(callID: due.callID, json: due.hangUp(Int64(Date().timeIntervalSince1970 * 1000)))
                emitted += 1
            }
            let elapsed = now - start
            let target = Int(elapsed.inSeconds * rate)
            while now < end && callNumber < target && emitted < limit {
                callNumber += 1
                let call = makeCall(number: callNumber, random: &random)
                await produce(callID: call.callID, json: call.incoming)
                emitted += 1
                if let hangUp = call.hangUp {
                    let delay = Double.random(in: mix.hangUpDelaySeconds, using: &random)
                    pendingHangUps.insert((hangUp, call.callID), due: now + .milliseconds(Int(delay * 1000)))
                }
            }
            if emitted >= limit || (now >= end && pendingHangUps.isEmpty) || Task.isCancelled { break }
            try? await Task.sleep(for: .milliseconds(5))
        }
        _ = await producer.flush(timeout: .seconds(30))
        finished.store(true, ordering: .releasing)
        return produced.succeeded
    }

    private func produce(callID: String, json: String) async {
        let record = KafkaProducerRecord(topic: topic, key: Array(callID.utf8), value: Array(json.utf8))
        while true {
            do {
                try producer.produce(record) { [self] result in
                    counts.withLock { if case .success = result { $0.produced += 1 } else { $0.failed += 1 } }
                }
                return
            } catch where error.code == .queueFull {
                try? await Task.sleep(for: .milliseconds(5))
            } catch {
                counts.withLock { $0.failed += 1 }
                return
            }
        }
    }

    private struct Call {
        let callID: String
        let incoming: String
        /// The hang-up event, given its `created_at`: the moment the caller hangs up.
        let hangUp: ((Int64) -> String)?
    }

    private func makeCall(number: Int, random: inout APNsMockRandom) -> Call {
        let callID = "call-\(number)"
        if Double.random(in: 0..<1, using: &random) < mix.malformedFraction {
            return Call(callID: callID, incoming: #"{"event_id":"broken-\#(number)","type":"incoming","call_id":"#, hangUp: nil)
        }
        let dead = Double.random(in: 0..<1, using: &random) < mix.deadTokenFraction
        let token = dead ? Self.deadTokens.randomElement(using: &random)! : Self.token(for: number)
        let push = Double.random(in: 0..<1, using: &random) < mix.voipFraction ? "voip" : "alert"
        let environment = Double.random(in: 0..<1, using: &random) < mix.sandboxFraction ? "sandbox" : "production"
        let nowMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let expired = Double.random(in: 0..<1, using: &random) < mix.expiredFraction
        let createdAt = expired ? nowMilliseconds - 120_000 : nowMilliseconds
        func event(_ type: String, _ id: String, _ created: Int64) -> String {
            #"{"event_id":"\#(id)","type":"\#(type)","call_id":"\#(callID)","device_token":"\#(token)","push":"\#(push)","topic":"\#(bundleID)","environment":"\#(environment)","created_at":\#(created),"ring_timeout_s":30,"caller":{"name":"Caller \#(number % 97)","id":"u-\#(number % 1000)"}}"#
        }
        let incoming = event("incoming", UUID().uuidString.lowercased(), createdAt)
        let hangsUp = !expired && Double.random(in: 0..<1, using: &random) < mix.hangUpFraction
        return Call(callID: callID, incoming: incoming, hangUp: hangsUp ? { event("hangup", UUID().uuidString.lowercased(), $0) } : nil)
    }

    private static func token(for number: Int) -> String { String(format: "%064x", number &* 2_654_435_761) }
}
