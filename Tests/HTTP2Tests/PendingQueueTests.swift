@testable import HTTP2
import Testing

/// The client connection's queue of requests not yet on the wire: expired ones leave from anywhere in it, the rest keep
/// their order, and popping goes on from where it was.
@Suite struct PendingQueueTests {
    static func stream(_ deadline: UInt64) -> ClientStream {
        ClientStream(HTTP2Submission(
            request: HTTP2Request(path: "/\(deadline)", authority: "localhost", headers: [], body: []),
            deadline: HTTP2Deadline(uptimeNanoseconds: deadline), completion: { _ in }))
    }

    /// Deadlines in queue order, then expired at `now`: what leaves, what stays, in order.
    @Test(arguments: [
        ([1, 2, 3, 9, 8], 3, [1, 2, 3], [9, 8]),  // a prefix: the head moves
        ([9, 1, 8, 2, 7], 3, [1, 2], [9, 8, 7]),  // from the middle: the rest is copied in order
        ([1, 9, 2, 8], 3, [1, 2], [9, 8]),  // a prefix and a later one
        ([1, 2, 3], 5, [1, 2, 3], []),  // everything
        ([7, 8, 9], 5, [], [7, 8, 9]),  // nothing
        ([], 5, [], []),
    ] as [([UInt64], UInt64, [UInt64], [UInt64])])
    func removeAllExpired(deadlines: [UInt64], now: UInt64, removed: [UInt64], kept: [UInt64]) {
        var queue = PendingQueue()
        _ = queue.popFirst()
        for deadline in deadlines { queue.append(Self.stream(deadline)) }
        #expect(queue.removeAll { $0.deadline <= now }.map(\.deadline) == removed)
        #expect(queue.count == kept.count)
        var order: [UInt64] = []
        queue.forEach { order.append($0.deadline) }
        #expect(order == kept)
        queue.append(Self.stream(100))
        var popped: [UInt64] = []
        while let next = queue.popFirst() { popped.append(next.deadline) }
        #expect(popped == kept + [100])
        #expect(queue.isEmpty)
    }
}
