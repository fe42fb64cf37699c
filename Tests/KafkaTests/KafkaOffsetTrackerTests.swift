import Testing

@testable import Kafka

@Suite struct KafkaOffsetTrackerTests {
    enum Step: Sendable, CustomStringConvertible {
        case deliver(Int64)
        case complete(Int64)

        var description: String {
            switch self {
            case .deliver(let offset): "deliver \(offset)"
            case .complete(let offset): "complete \(offset)"
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var steps: [Step]
        /// Expected committable offset after each step.
        var committable: [Int64?]
        var inFlight: Int
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "empty", steps: [], committable: [], inFlight: 0),
        Case(
            name: "in order",
            steps: [.deliver(0), .deliver(1), .complete(0), .complete(1)],
            committable: [0, 0, 1, 2],
            inFlight: 0
        ),
        Case(
            name: "out of order holds at lowest",
            steps: [.deliver(5), .deliver(6), .deliver(7), .complete(7), .complete(6), .complete(5)],
            committable: [5, 5, 5, 5, 5, 8],
            inFlight: 0
        ),
        Case(
            name: "gaps in offsets (compaction)",
            steps: [.deliver(10), .deliver(14), .deliver(20), .complete(14), .complete(10)],
            committable: [10, 10, 10, 10, 20],
            inFlight: 1
        ),
        Case(
            name: "double completion ignored",
            steps: [.deliver(1), .deliver(2), .complete(2), .complete(2), .complete(1)],
            committable: [1, 1, 1, 1, 3],
            inFlight: 0
        ),
        Case(
            name: "unknown completion ignored",
            steps: [.deliver(3), .complete(99), .complete(2)],
            committable: [3, 3, 3],
            inFlight: 1
        ),
        Case(
            name: "duplicate delivery ignored",
            steps: [.deliver(3), .deliver(3), .complete(3)],
            committable: [3, 3, 4],
            inFlight: 0
        ),
        Case(
            name: "redelivery of completed-ahead offset counts again",
            steps: [.deliver(1), .deliver(2), .complete(2), .deliver(2), .complete(1), .complete(2)],
            committable: [1, 1, 1, 1, 2, 3],
            inFlight: 0
        ),
        Case(
            name: "redelivery below committable ignored",
            steps: [.deliver(1), .complete(1), .deliver(1)],
            committable: [1, 2, 2],
            inFlight: 0
        ),
    ]

    @Test(arguments: cases)
    func table(_ testCase: Case) {
        var tracker = KafkaOffsetTracker()
        #expect(tracker.committableOffset == nil)
        for (step, expected) in zip(testCase.steps, testCase.committable) {
            switch step {
            case .deliver(let offset): tracker.delivered(offset)
            case .complete(let offset): tracker.completed(offset)
            }
            #expect(tracker.committableOffset == expected, "after \(step)")
        }
        #expect(tracker.inFlightCount == testCase.inFlight)
    }

    @Test func randomCompletionOrderMatchesReference() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10 {
            var tracker = KafkaOffsetTracker()
            var offsets: [Int64] = []
            var next: Int64 = 0
            for _ in 0..<3000 {
                next += Int64.random(in: 1...3, using: &generator)
                offsets.append(next)
            }
            var unfinished = Set<Int64>()
            var pendingDelivery = offsets[...]
            while !pendingDelivery.isEmpty || !unfinished.isEmpty {
                if !pendingDelivery.isEmpty, unfinished.isEmpty || Bool.random(using: &generator) {
                    let offset = pendingDelivery.removeFirst()
                    let accepted = tracker.delivered(offset)
                    #expect(accepted)
                    unfinished.insert(offset)
                } else {
                    let offset = unfinished.randomElement(using: &generator)!
                    let accepted = tracker.completed(offset)
                    #expect(accepted)
                    unfinished.remove(offset)
                }
                let delivered = offsets[..<(offsets.count - pendingDelivery.count)]
                let expected = unfinished.min() ?? (delivered.last.map { $0 + 1 })
                guard tracker.committableOffset == expected else {
                    Issue.record("committable \(String(describing: tracker.committableOffset)) != \(String(describing: expected))")
                    return
                }
                #expect(tracker.inFlightCount == unfinished.count)
            }
        }
    }
}
