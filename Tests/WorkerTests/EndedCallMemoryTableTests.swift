import Testing
@testable import Worker

/// docs/call-handling.md, "Ended-call memory (EndedCallMemory)": one argument per row of its table, and a check that
/// the table has exactly these rows.
@Suite struct EndedCallMemoryTableTests {
    static let section = "Ended-call memory (EndedCallMemory)"

    /// The rows of the table, by their first column.
    enum Row: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case marked = "call marked ended"
        case retentionPassed = "retention passed"
        case forgetting = "forgetting expired calls"
        case capacityReached = "capacity reached"
        case markedAgain = "call marked again"
        case noCapacity = "no capacity"
        case reach = "reach"
        case firstMarked = "first call marked"

        var testDescription: String { rawValue }
    }

    /// Three calls for 10 s.
    static func memory(capacity: Int = 3) -> EndedCallMemory {
        EndedCallMemory(capacity: capacity, retention: .seconds(10))
    }

    @Test(arguments: Row.allCases)
    func row(_ row: Row) {
        var memory = Self.memory()
        switch row {
        case .marked:
            #expect(!memory.contains(1, at: 1_000))
            memory.remember(1, at: 1_000)
            #expect(memory.contains(1, at: 1_000) && memory.contains(1, at: 10_999) && memory.count == 1)
        case .retentionPassed:
            memory.remember(1, at: 1_000)
            #expect(!memory.contains(1, at: 11_000), "10 s after its marking, before any forgetting")
            #expect(memory.count == 1, "still counted until forgotten")
        case .forgetting:
            memory.remember(1, at: 1_000)
            memory.remember(2, at: 5_000)
            memory.remember(3, at: 2_000)  // newer than 2, though marked earlier: forgetting stops at 2
            memory.forgetExpired(at: 12_000)
            #expect(memory.count == 2 && memory.contains(2, at: 12_000))
            #expect(!memory.contains(3, at: 12_000), "past its retention, yet kept behind the current one")
            memory.forgetExpired(at: 15_000)
            #expect(memory.count == 0)
        case .capacityReached:
            for key in UInt64(1)...3 { memory.remember(key, at: 1_000 + Int64(key)) }
            memory.remember(4, at: 2_000)
            #expect(memory.count == 3 && !memory.contains(1, at: 2_000))
            #expect([2, 3, 4].allSatisfy { memory.contains($0, at: 2_000) })
        case .markedAgain:
            memory.remember(1, at: 0)
            memory.remember(2, at: 1_000)
            memory.remember(3, at: 2_000)
            memory.remember(1, at: 6_000)
            memory.remember(4, at: 7_000)  // pushes out 2, now the oldest, not 1
            #expect(!memory.contains(2, at: 7_000) && memory.contains(1, at: 7_000))
            #expect(memory.contains(1, at: 15_999) && !memory.contains(1, at: 16_000), "its time is the new one")
        case .noCapacity:
            for capacity in [0, -5] {
                var empty = Self.memory(capacity: capacity)
                empty.remember(1, at: 0)
                #expect(empty.capacity == 0 && !empty.contains(1, at: 0))
                #expect(empty.count == 0 && empty.allocatedBytes == 0)
            }
            #expect(Self.memory(capacity: Int.max).capacity == 1 << 28)
        case .reach:
            #expect(memory.reachMilliseconds(at: 1_000) == 10_000, "room: the retention")
            for key in UInt64(1)...3 { memory.remember(key, at: 1_000 * Int64(key)) }
            #expect(memory.reachMilliseconds(at: 5_000) == 4_000, "full: the age of the oldest call")
            #expect(memory.reachMilliseconds(at: 50_000) == 10_000, "never beyond the retention")
            #expect(Self.memory(capacity: 0).reachMilliseconds(at: 1_000) == 0)
        case .firstMarked:
            var large = Self.memory(capacity: 100_000)
            #expect(large.allocatedBytes == 0)
            large.remember(1, at: 0)
            let allocated = large.allocatedBytes
            #expect((3_400_000...3_500_000).contains(allocated), "about 34 bytes a call: \(allocated)")
            for key in UInt64(2)...150_000 { large.remember(key &* 0x9E37_79B9_7F4A_7C15, at: 0) }
            #expect(large.count == 100_000 && large.allocatedBytes == allocated)
        }
    }

    @Test func theDocumentHasExactlyTheseRows() throws {
        #expect(try CallHandlingDoc.keys(section: Self.section) == Row.allCases.map(\.rawValue))
    }
}
