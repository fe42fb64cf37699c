import Testing
@testable import Worker

@Suite struct EndedCallMemoryTests {
    /// Keys whose low 32 bits are equal share one home slot in any index up to 2³² slots.
    static func colliding(_ index: UInt64) -> UInt64 { (index << 32) | 0x5 }

    @Test func forgetsAfterTheRetention() {
        var memory = EndedCallMemory(capacity: 10, retention: .seconds(10))
        memory.remember(1, at: 1_000)
        memory.remember(2, at: 5_000)
        #expect(memory.contains(1, at: 10_999))
        #expect(!memory.contains(1, at: 11_000))
        #expect(memory.contains(2, at: 11_000))
        // Expired entries count until forgotten; forgetting stops at the first current one.
        #expect(memory.count == 2)
        memory.forgetExpired(at: 11_000)
        #expect(memory.count == 1)
        #expect(memory.contains(2, at: 14_999))
        memory.forgetExpired(at: 15_000)
        #expect(memory.count == 0)
        #expect(!memory.contains(2, at: 15_000))
    }

    @Test func capacityPushesOutTheOldestFirst() {
        var memory = EndedCallMemory(capacity: 3, retention: .seconds(600))
        for key in UInt64(1)...3 { memory.remember(key, at: 1_000 + Int64(key)) }
        memory.remember(4, at: 2_000)
        #expect(memory.count == 3)
        #expect(!memory.contains(1, at: 2_000))
        #expect([2, 3, 4].allSatisfy { memory.contains($0, at: 2_000) })
        memory.remember(5, at: 2_001)
        memory.remember(6, at: 2_002)
        #expect(!memory.contains(2, at: 2_002))
        #expect(!memory.contains(3, at: 2_002))
        #expect([4, 5, 6].allSatisfy { memory.contains($0, at: 2_002) })
    }

    /// The memory reaches back its retention while it has room, then as far as its oldest call.
    @Test func reachIsTheRetentionUntilFullThenTheOldestCallsAge() {
        var memory = EndedCallMemory(capacity: 3, retention: .seconds(600))
        #expect(memory.reachMilliseconds(at: 1_000) == 600_000)
        for key in UInt64(1)...3 { memory.remember(key, at: 1_000 * Int64(key)) }
        #expect(memory.reachMilliseconds(at: 10_000) == 9_000, "full: call 1 ended 9 s ago")
        memory.remember(4, at: 10_000)
        #expect(memory.reachMilliseconds(at: 10_000) == 8_000, "call 1 pushed out: call 2 is the oldest")
        #expect(memory.reachMilliseconds(at: 700_000) == 600_000, "never beyond the retention")
        #expect(EndedCallMemory(capacity: 0, retention: .seconds(600)).reachMilliseconds(at: 1_000) == 0)
    }

    @Test func markingAgainRefreshesAgeAndOrder() {
        var memory = EndedCallMemory(capacity: 3, retention: .seconds(10))
        memory.remember(1, at: 0)
        memory.remember(2, at: 1_000)
        memory.remember(3, at: 2_000)
        memory.remember(1, at: 6_000)  // 1 is now the newest, marked at 6 s
        #expect(memory.count == 3)
        memory.remember(4, at: 7_000)  // pushes out 2, the oldest now
        #expect(!memory.contains(2, at: 7_000))
        #expect([1, 3, 4].allSatisfy { memory.contains($0, at: 7_000) })
        // 1 would have expired at 10 s; refreshed, it lasts until 16 s, after 3 (12 s).
        memory.forgetExpired(at: 12_000)
        #expect(!memory.contains(3, at: 12_000))
        #expect(memory.contains(1, at: 15_999))
        #expect(!memory.contains(1, at: 16_000))
        #expect(memory.count == 2)
    }

    @Test func zeroCapacityRemembersNothing() {
        var memory = EndedCallMemory(capacity: 0, retention: .seconds(10))
        memory.remember(1, at: 0)
        #expect(!memory.contains(1, at: 0))
        #expect(memory.count == 0)
        #expect(memory.allocatedBytes == 0)
        #expect(EndedCallMemory(capacity: -5, retention: .seconds(1)).capacity == 0)
    }

    @Test func allocatesOnceAtTheFirstCall() {
        var memory = EndedCallMemory(capacity: 100_000, retention: .seconds(600))
        #expect(memory.allocatedBytes == 0)
        memory.remember(1, at: 0)
        let allocated = memory.allocatedBytes
        // 100 000 nodes of 24 bytes and 2¹⁸ slots of 4 bytes.
        #expect(allocated >= 100_000 * 24 + (1 << 18) * 4)
        #expect(allocated < 100_000 * 24 + (1 << 18) * 4 + 4096)
        for key in UInt64(2)...250_000 { memory.remember(key &* 0x9E37_79B9_7F4A_7C15, at: Int64(key)) }
        #expect(memory.count == 100_000)
        #expect(memory.allocatedBytes == allocated)
    }

    @Test func collidingKeysStayFindableThroughRemovals() {
        // Every key has the same home slot: one probe run of 8 in a 16-slot table. Refreshes reorder the list, so the
        // oldest call, removed when a new one comes, sits anywhere in the run, and the entries after it shift back.
        var generator = SplitMix64(seed: 7)
        var memory = EndedCallMemory(capacity: 8, retention: .seconds(1_000))
        var model: [UInt64: Int64] = [:]
        for step in 0..<400 {
            let now = Int64(step) * 1_000
            let key = Self.colliding(generator.next() % 13)
            memory.remember(key, at: now)
            model[key] = now
            if model.count > 8, let oldest = model.min(by: { $0.value < $1.value }) { model[oldest.key] = nil }
            for index in UInt64(0)..<13 {
                let probe = Self.colliding(index)
                #expect(memory.contains(probe, at: now) == (model[probe] != nil), "key \(index) at step \(step)")
            }
        }
        // Keys whose homes straddle the table's end (slots 15 and 0) and interleave with other runs.
        var wrapping = EndedCallMemory(capacity: 8, retention: .seconds(100))
        let keys: [UInt64] = [15, 31, 47, 0, 16, 14, 30, 1]
        for (index, key) in keys.enumerated() { wrapping.remember(key, at: Int64(index)) }
        for (index, _) in keys.enumerated() {
            wrapping.remember(1_000 + UInt64(index) * 16 + 2, at: 100 + Int64(index))  // pushes out keys[index]
            #expect(!wrapping.contains(keys[index], at: 100))
            for later in keys[(index + 1)...] { #expect(wrapping.contains(later, at: 100), "key \(later)") }
        }
    }

    @Test func randomOperationsMatchASetModel() {
        var generator = SplitMix64(seed: 0xC0FFEE)
        let capacity = 64
        let retention: Int64 = 5_000
        var memory = EndedCallMemory(capacity: capacity, retention: .milliseconds(retention))
        // The model: the set of remembered keys with their marking times, oldest first.
        var model: [(key: UInt64, at: Int64)] = []
        var now: Int64 = 0
        for step in 0..<50_000 {
            now += Int64(generator.next() % 20)
            // Small key space so keys repeat (refreshes), with collisions forced in the low bits half of the time.
            let raw = generator.next() % 200
            let key = raw % 2 == 0 ? raw : Self.colliding(raw)
            switch generator.next() % 4 {
            case 0, 1:
                memory.forgetExpired(at: now)
                model.removeAll { now - $0.at >= retention }
                memory.remember(key, at: now)
                model.removeAll { $0.key == key }
                model.append((key, now))
                if model.count > capacity { model.removeFirst() }
            case 2:
                memory.forgetExpired(at: now)
                model.removeAll { now - $0.at >= retention }
                #expect(memory.count == model.count, "count at step \(step)")
            default:
                let expected = model.contains { $0.key == key && now - $0.at < retention }
                #expect(memory.contains(key, at: now) == expected, "key \(key) at step \(step)")
            }
        }
        let current = Set(model.filter { now - $0.at < retention }.map(\.key))
        for raw in UInt64(0)..<200 {
            let key = raw % 2 == 0 ? raw : Self.colliding(raw)
            #expect(memory.contains(key, at: now) == current.contains(key))
        }
    }
}

