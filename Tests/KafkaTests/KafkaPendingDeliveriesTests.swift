import Testing

@testable import Kafka

@Suite struct KafkaPendingDeliveriesTests {
    @Test func idsAreIncreasingAndEachElementIsTakenOnce() {
        var pending = KafkaPendingDeliveries<String>()
        let a = pending.insert("a")
        let b = pending.insert("b")
        let c = pending.insert("c")
        #expect([a, b, c] == [1, 2, 3])
        #expect(pending.count == 3)
        #expect(pending.remove(b) == "b")
        #expect(pending.remove(b) == nil)
        #expect(pending.remove(99) == nil)
        #expect(pending.remove(0) == nil)
        #expect(pending.remove(a) == "a")
        #expect(pending.remove(c) == "c")
        #expect(pending.isEmpty)
        // Ids are never reused, also after the ring emptied.
        #expect(pending.insert("d") == 4)
        #expect(pending.remove(a) == nil)
        #expect(pending.remove(4) == "d")
    }

    /// Reports come back in order per partition, interleaved across partitions, while more records go in: the ring
    /// wraps around and grows, and every element comes out exactly once under its own id.
    @Test func interleavedRemovalsAcrossGrowthAndWrapAround() {
        var pending = KafkaPendingDeliveries<Int>()
        var ids: [UInt: Int] = [:]
        var removed = 0
        var next = 0
        // Four "partitions": element n belongs to partition n % 4; each partition reports in order, partition 3 lags.
        var waiting: [[UInt]] = [[], [], [], []]
        for round in 0..<200 {
            for _ in 0..<37 {
                let id = pending.insert(next)
                ids[id] = next
                waiting[next % 4].append(id)
                next += 1
            }
            for partition in 0..<4 {
                let take = partition == 3 ? (round % 5 == 4 ? waiting[3].count : 0) : min(10, waiting[partition].count)
                for _ in 0..<take {
                    let id = waiting[partition].removeFirst()
                    #expect(pending.remove(id) == ids[id])
                    removed += 1
                }
            }
            #expect(pending.count == next - removed)
        }
        let rest = pending.removeAll()
        #expect(rest == rest.sorted())
        #expect(rest.count == next - removed)
        #expect(Set(rest) == Set(waiting.flatMap { $0 }.map { ids[$0]! }))
        #expect(pending.isEmpty)
        #expect(pending.remove(waiting[0].first ?? 1) == nil)
    }

    /// The ring grows while its oldest slot is not at index 0: the slots keep their ids across the move.
    @Test func growsWhileWrappedAround() {
        var pending = KafkaPendingDeliveries<Int>()
        var ids: [UInt: Int] = [:]
        for value in 0..<1000 { ids[pending.insert(value)] = value }
        for id in ids.keys.sorted().prefix(900) { #expect(pending.remove(id) == ids.removeValue(forKey: id)) }
        // 100 left at the end of the first 1024 slots; 5000 more wrap around and make it grow (several times).
        for value in 1000..<6000 { ids[pending.insert(value)] = value }
        #expect(pending.count == 5100)
        for id in ids.keys.sorted() where id % 3 == 0 { #expect(pending.remove(id) == ids.removeValue(forKey: id)) }
        #expect(pending.removeAll() == ids.keys.sorted().map { ids[$0]! })
        #expect(pending.isEmpty)
    }

    @Test func removeAllReturnsWhatIsLeftInIdOrder() {
        var pending = KafkaPendingDeliveries<Int>()
        let ids = (0..<10).map { pending.insert($0) }
        _ = pending.remove(ids[0])
        _ = pending.remove(ids[4])
        _ = pending.remove(ids[9])
        #expect(pending.removeAll() == [1, 2, 3, 5, 6, 7, 8])
        #expect(pending.count == 0)
        #expect(pending.insert(10) == 11)
    }
}
