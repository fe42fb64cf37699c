import APNsMock
import Foundation
package import Kafka
import Synchronization
import Telemetry

/// Produces synthetic call traffic to the calls topic at a steady rate: incoming calls, some hang-ups a moment
/// later, some to dead device tokens, some malformed, some already expired, alert and VoIP, production and sandbox.
package final class CallTrafficGenerator: Sendable {
    let mix: CallTrafficMix
    package let topic: String
    package let bundleID: String
    private let producer: KafkaProducer
    private let counts = DeliveryCounts()
    /// `counts.record`, made once: a method reference made per record would be an allocation per event.
    private let delivered: KafkaProducer.Completion
    private let finished = Atomic<Bool>(false)

    /// Device tokens that ``deadTokens`` holds; configure the mock APNs to answer 410 for them.
    package static let deadTokens: Set<String> = Set(CallEventRenderer.deadTokens.map { String(decoding: $0, as: UTF8.self) })

    package init(producer: KafkaProducer, topic: String = "calls", bundleID: String, mix: CallTrafficMix = .init()) {
        self.producer = producer
        self.topic = topic
        self.bundleID = bundleID
        self.mix = mix
        delivered = counts.record
    }

    /// Events acknowledged by Kafka, and events whose produce failed.
    package var produced: (succeeded: Int, failed: Int) { counts.value }

    /// True once ``run(rate:count:duration:seed:)`` has produced everything and received every delivery report.
    package var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Produces about `rate` calls per second until `count` events were produced or `duration` passed
    /// (whichever comes first), then waits for every delivery report. `seed` fixes the mix (which calls hang up,
    /// fail, expire…); call and event ids differ from run to run.
    /// - Returns: the number of events acknowledged.
    package func run(rate: Double, count: Int?, duration: Duration, seed: UInt64 = 42) async -> Int {
        // A warm-up only: the records' own delivery reports carry any error (a cluster that cannot be reached).
        _ = try? producer.prepare(topics: [topic], timeout: .seconds(5))
        var random = APNsMockRandom(seed: seed)
        let ids = APNsMockIDGenerator()
        let renderer = CallEventRenderer(topic: bundleID, runTag: UInt32.random(in: .min ... .max))
        var pendingHangUps = DueQueue<(call: CallEventRenderer.Call, callID: [UInt8])>()
        let start = ContinuousClock.now
        let end = start + duration
        var emitted = 0
        var callNumber = 0
        let limit = count ?? Int.max
        while true {
            let now = ContinuousClock.now
            while emitted < limit, let due = pendingHangUps.popDue(at: now) {
                let json = renderer.render(.hangUp, due.call, callID: due.callID, eventID: ids.next(uppercase: false),
                                           createdAt: Self.epochMilliseconds())
                await produce(key: due.callID, value: json)
                emitted += 1
            }
            let elapsed = now - start
            let target = Int(elapsed.inSeconds * rate)
            while now < end && callNumber < target && emitted < limit {
                callNumber += 1
                let callID = renderer.callID(callNumber)
                emitted += 1
                guard Double.random(in: 0..<1, using: &random) >= mix.malformedFraction else {
                    await produce(key: callID, value: renderer.malformed(callNumber))
                    continue
                }
                let call = makeCall(number: callNumber, random: &random)
                let expired = Double.random(in: 0..<1, using: &random) < mix.expiredFraction
                let createdAt = Self.epochMilliseconds() - (expired ? 120_000 : 0)
                let json = renderer.render(.incoming, call, callID: callID, eventID: ids.next(uppercase: false),
                                           createdAt: createdAt)
                await produce(key: callID, value: json)
                if !expired && Double.random(in: 0..<1, using: &random) < mix.hangUpFraction {
                    let delay = Double.random(in: mix.hangUpDelaySeconds, using: &random)
                    pendingHangUps.insert((call, callID), due: now + .milliseconds(Int(delay * 1000)))
                }
            }
            if emitted >= limit || (now >= end && pendingHangUps.isEmpty) || Task.isCancelled { break }
            try? await Task.sleep(for: .milliseconds(5))
        }
        _ = await producer.flush(timeout: .seconds(30))
        finished.store(true, ordering: .releasing)
        return produced.succeeded
    }

    private func produce(key: [UInt8], value: [UInt8]) async {
        let record = KafkaProducerRecord(topic: topic, key: key, value: value)
        while true {
            do {
                try producer.produce(record, completion: delivered)
                return
            } catch where error.code == .queueFull {
                try? await Task.sleep(for: .milliseconds(5))
            } catch {
                counts.record(.failure(error))
                return
            }
        }
    }

    private func makeCall(number: Int, random: inout APNsMockRandom) -> CallEventRenderer.Call {
        let dead = Double.random(in: 0..<1, using: &random) < mix.deadTokenFraction
        let deadToken = dead ? Int(random.next() % UInt64(CallEventRenderer.deadTokens.count)) : nil
        let voip = Double.random(in: 0..<1, using: &random) < mix.voipFraction
        let sandbox = Double.random(in: 0..<1, using: &random) < mix.sandboxFraction
        return CallEventRenderer.Call(number: number, deadToken: deadToken, voip: voip, sandbox: sandbox)
    }

    /// Milliseconds since 1970 (`created_at`), without a `Date`.
    private static func epochMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Delivery reports counted by outcome.
    private final class DeliveryCounts: Sendable {
        private let counts = Mutex<(produced: Int, failed: Int)>((0, 0))

        var value: (succeeded: Int, failed: Int) { counts.withLock { ($0.produced, $0.failed) } }

        @Sendable func record(_ result: Result<KafkaDeliveryReport, KafkaError>) {
            counts.withLock { if case .success = result { $0.produced += 1 } else { $0.failed += 1 } }
        }
    }
}
