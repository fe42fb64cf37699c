import Kafka
import Testing

@testable import Worker

@Suite struct CreationTimeBoundTests {
    let now: Int64 = 1_764_489_600_123

    func bounded(_ event: CallEvent, deadline: String? = nil) -> (createdAt: Int64, skew: Int64) {
        var event = event
        let headers = deadline.map { [KafkaHeader(name: "x-deadline", string: $0)] } ?? []
        let skew = CreationTimeBound.apply(to: &event, headers: headers, now: now)
        return (event.createdAtMilliseconds, skew)
    }

    @Test func aCreationTimeAheadCountsAsNow() {
        #expect(bounded(Fixtures.event(createdAt: now + 5_000)) == (now, 5_000))
        #expect(bounded(Fixtures.event(type: .hangup, createdAt: now + 1)) == (now, 1))
        #expect(bounded(Fixtures.event(createdAt: now - 5_000)) == (now - 5_000, 0))
        #expect(bounded(Fixtures.event(createdAt: now)) == (now, 0))
    }

    @Test func anEarlierHopsDeadlineOnlyShortensAnIncomingCall() {
        let event = Fixtures.event(createdAt: now - 10_000)  // rings until now + 20 s
        #expect(bounded(event, deadline: String(now + 5_000)).createdAt == now - 25_000)
        #expect(bounded(event, deadline: String(now + 60_000)).createdAt == now - 10_000)
        #expect(bounded(event, deadline: "soon").createdAt == now - 10_000, "malformed: ignored")
        #expect(bounded(event, deadline: String(Int64.min + 1)).createdAt == 0, "no overflow")
        #expect(bounded(event, deadline: "0").createdAt == 0)
        // A stop event's deadline is its retry window (RetryContext reads the header itself).
        #expect(bounded(Fixtures.event(type: .hangup, createdAt: now - 10_000), deadline: "1").createdAt == now - 10_000)
    }
}
