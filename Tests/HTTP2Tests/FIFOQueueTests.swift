@testable import Runtime
@testable import HTTP2
import Testing

/// The FIFO of the client connection's requests not yet on the wire and of a pool's pushes: expired ones leave from
/// anywhere in it, the rest keep their order, popping goes on from where it was, a re-send goes back in front, and
/// nothing handed out stays referenced by the queue.
@Suite struct FIFOQueueTests {
    static func stream(_ deadline: UInt64) -> HTTP2ClientStream {
        HTTP2ClientStream(HTTP2Request(path: "/\(deadline)", authority: "localhost", headers: [], body: []),
                          deadline: HTTP2Deadline(uptimeNanoseconds: deadline))
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
        var queue = FIFOQueue<HTTP2ClientStream>()
        _ = queue.popFirst()
        for deadline in deadlines { queue.append(Self.stream(deadline)) }
        #expect(queue.removeAll { $0.deadline.uptimeNanoseconds <= now }.map(\.deadline.uptimeNanoseconds) == removed)
        #expect(queue.count == kept.count)
        var order: [UInt64] = []
        queue.forEach { order.append($0.deadline.uptimeNanoseconds) }
        #expect(order == kept)
        queue.append(Self.stream(100))
        var popped: [UInt64] = []
        while let next = queue.popFirst() { popped.append(next.deadline.uptimeNanoseconds) }
        #expect(popped == kept + [100])
        #expect(queue.isEmpty)
    }

    @Test func prependKeepsAReSendAheadAndTheQueueReleasesWhatItHandsOut() {
        var queue = FIFOQueue<HTTP2ClientStream>()
        #expect(queue.first == nil && queue.popFirst() == nil)
        queue.append(contentsOf: [Self.stream(1), Self.stream(2), Self.stream(3)])
        weak var handedOut: HTTP2ClientStream?
        do {
            let popped = queue.popFirst()
            handedOut = popped
            #expect(popped?.deadline.uptimeNanoseconds == 1)
            queue.prepend(Self.stream(0))  // into the slot the pop freed
        }
        #expect(handedOut == nil, "the queue kept a popped element alive")
        queue.prepend(Self.stream(255))  // before the head: an insert
        #expect(queue.first?.deadline.uptimeNanoseconds == 255 && queue.count == 4)
        #expect(queue.takeAll().map(\.deadline.uptimeNanoseconds) == [255, 0, 2, 3])
        #expect(queue.isEmpty)
    }

    @Test func aLongQueueCompactsAsItIsConsumed() {
        var queue = FIFOQueue<HTTP2ClientStream>()
        for index in 0..<5000 { queue.append(Self.stream(UInt64(index))) }
        var popped: [UInt64] = []
        for _ in 0..<3000 { popped.append(queue.popFirst()!.deadline.uptimeNanoseconds) }
        #expect(popped == (0..<3000).map(UInt64.init))
        queue.append(Self.stream(9999))
        #expect(queue.count == 2001)
        var rest: [UInt64] = []
        queue.forEach { rest.append($0.deadline.uptimeNanoseconds) }
        #expect(rest == (3000..<5000).map(UInt64.init) + [9999])
    }
}
